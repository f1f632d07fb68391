//! Independent runs on several host threads, their results taken in order: a sweep's sizes
//! are separate worlds, so running them at once changes nothing but the wall time, and the
//! table still reads in size order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Calls `work(i, &items[i])` for every item on up to `threads` host threads and hands each
/// result to `take` in item order, as soon as it and every earlier one are done. When `take`
/// fails, no further item is started and the error is returned once the running ones end.
/// Items are expected in increasing cost (a sweep's sizes): they start in [`start_order`], the
/// costliest first on all threads but one, so the longest run does not start last.
pub(crate) fn in_order<T: Sync, R: Send, E>(
    items: &[T],
    threads: usize,
    work: impl Fn(usize, &T) -> R + Sync,
    mut take: impl FnMut(usize, R) -> Result<(), E>,
) -> Result<(), E> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        for (i, item) in items.iter().enumerate() {
            take(i, work(i, item))?;
        }
        return Ok(());
    }
    let order = start_order(items.len(), threads);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for _ in 0..threads {
            let (tx, next, stop, work, order) = (tx.clone(), &next, &stop, &work, &order);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                    let Some(item) = items.get(i) else { break };
                    if tx.send((i, work(i, item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let (mut waiting, mut due) = (BTreeMap::new(), 0);
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&due) {
                if let Err(e) = take(due, r) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                due += 1;
            }
        }
        Ok(())
    })
}

/// The order `n` items increasing in cost start in on `threads` threads: the last
/// `threads - 1` (the costliest), costliest first, then the others from the first. One thread
/// runs the cheap items in order, so the table starts at once, while the others take the
/// long runs from the start: a 1 GiB row no longer waits for the 512 MiB one to be picked up.
pub(crate) fn start_order(n: usize, threads: usize) -> Vec<usize> {
    let heavy = threads.saturating_sub(1).min(n);
    (n - heavy..n).rev().chain(0..n - heavy).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_costliest_items_start_first_on_all_threads_but_one() {
        assert_eq!(start_order(5, 1), [0, 1, 2, 3, 4]);
        assert_eq!(start_order(5, 2), [4, 0, 1, 2, 3]);
        assert_eq!(start_order(5, 3), [4, 3, 0, 1, 2]);
        assert_eq!(start_order(2, 8), [1, 0]);
        assert!(start_order(0, 4).is_empty());
    }

    #[test]
    fn results_come_in_item_order_whatever_the_threads() {
        let items: Vec<u64> = (0..40).collect();
        for threads in [1, 2, 3, 8] {
            let mut got = Vec::new();
            // Later items finish first: the slow ones are the small indices.
            let r: Result<(), ()> = in_order(
                &items,
                threads,
                |i, &x| {
                    std::thread::sleep(std::time::Duration::from_micros(((40 - i) * 50) as u64));
                    x * x
                },
                |i, r| {
                    got.push((i, r));
                    Ok(())
                },
            );
            assert_eq!(r, Ok(()));
            assert_eq!(got, items.iter().map(|&x| (x as usize, x * x)).collect::<Vec<_>>(), "{threads} threads");
        }
    }

    #[test]
    fn a_failing_take_stops_the_rest() {
        let items: Vec<usize> = (0..100_000).collect();
        let (ran, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
        let r = in_order(
            &items,
            2,
            |i, &x| {
                ran.fetch_add(1, Ordering::Relaxed);
                // Items after the failing one wait for the failure, so they cannot all finish
                // before it is seen.
                while i > 3 && !failed.load(Ordering::Relaxed) {
                    std::thread::yield_now();
                }
                x
            },
            |i, _| {
                if i == 3 {
                    failed.store(true, Ordering::Relaxed);
                    return Err(i);
                }
                Ok(())
            },
        );
        assert_eq!(r, Err(3));
        assert!(ran.load(Ordering::Relaxed) < items.len());
    }
}
