"""A small numpy stand-in for the torch calls PyPTO's examples and distributed system tests
make, for machines without torch (ranksim's CI among them).

It is a directory holding a package named ``torch``; put the directory on the path to use it::

    PYTHONPATH=$(python3 -c "import ranksim.pypto.torch_standin as t; print(t.PATH)") python3 prog.py

Tensors are numpy arrays (a thin ``ndarray`` subclass with torch's method names: ``fill_``,
``zero_``, ``share_memory_``, ``view``, ``to``, ``item``, ...); ``torch.bfloat16`` data is
float32 rounded to bf16 precision. It covers what those programs call, not torch: anything
else raises AttributeError. With real torch installed, do not use it: ranksim takes torch
tensors directly and writes results back into them in place."""

import os

PATH = os.path.dirname(os.path.abspath(__file__))
