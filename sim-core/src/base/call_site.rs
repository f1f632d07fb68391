//! Where in a kernel's source an operation was called, as reports name it (`file:line:col`).
//!
//! Rust records a call's [`Location`] in the program's own memory, which means nothing to
//! another process. A split run over processes sends a site as its text, and the receiving
//! process keeps it as a [`CallSite::Named`] (interned: each distinct site is stored once, for the
//! rest of the process). Both kinds compare, hash and print by their text.

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::panic::Location;
use std::sync::{Mutex, OnceLock};

/// A call site of a kernel's operation.
#[derive(Copy, Clone, Debug)]
pub(crate) enum CallSite {
    /// As Rust recorded it in this process.
    Here(&'static Location<'static>),
    /// As another process named it.
    Named(&'static Named),
}

/// The sites other processes named, by their text.
type SiteTable = HashMap<(Box<str>, u32, u32), &'static Named>;

/// A site another process named.
#[derive(Debug)]
pub(crate) struct Named {
    file: Box<str>,
    line: u32,
    column: u32,
}

impl CallSite {
    /// The site `file:line:column` another process named; the same text gives the same site.
    pub(crate) fn named(file: &str, line: u32, column: u32) -> CallSite {
        static SITES: OnceLock<Mutex<SiteTable>> = OnceLock::new();
        let mut sites = SITES.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
        let key = (Box::from(file), line, column);
        let named =
            sites.entry(key).or_insert_with(|| Box::leak(Box::new(Named { file: Box::from(file), line, column })));
        CallSite::Named(named)
    }

    /// The source file.
    pub(crate) fn file(&self) -> &'static str {
        match self {
            CallSite::Here(l) => l.file(),
            CallSite::Named(n) => &n.file,
        }
    }

    /// The line, from 1.
    pub(crate) fn line(&self) -> u32 {
        match self {
            CallSite::Here(l) => l.line(),
            CallSite::Named(n) => n.line,
        }
    }

    /// The column, from 1.
    pub(crate) fn column(&self) -> u32 {
        match self {
            CallSite::Here(l) => l.column(),
            CallSite::Named(n) => n.column,
        }
    }

    /// The location Rust recorded, for a site of this process.
    pub(crate) fn location(&self) -> Option<&'static Location<'static>> {
        match self {
            CallSite::Here(l) => Some(l),
            CallSite::Named(_) => None,
        }
    }
}

/// `text` as a string that lives as long as the process (an operation's name another process
/// sent); the same text is stored once.
pub(crate) fn static_text(text: &str) -> &'static str {
    static TEXTS: OnceLock<Mutex<HashMap<Box<str>, &'static str>>> = OnceLock::new();
    let mut texts = TEXTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    texts.entry(Box::from(text)).or_insert_with(|| Box::leak(Box::from(text)))
}

impl From<&'static Location<'static>> for CallSite {
    fn from(l: &'static Location<'static>) -> CallSite {
        CallSite::Here(l)
    }
}

impl PartialEq for CallSite {
    fn eq(&self, o: &CallSite) -> bool {
        (self.file(), self.line(), self.column()) == (o.file(), o.line(), o.column())
    }
}

impl Eq for CallSite {}

impl Hash for CallSite {
    fn hash<H: Hasher>(&self, h: &mut H) {
        (self.file(), self.line(), self.column()).hash(h);
    }
}

impl fmt::Display for CallSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file(), self.line(), self.column())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_site_is_the_site_it_names() {
        let loc = Location::caller();
        let here = CallSite::from(loc);
        let named = CallSite::named(loc.file(), loc.line(), loc.column());
        assert_eq!(named, here);
        assert_eq!(named.to_string(), loc.to_string(), "printed as Rust prints a location");
        assert!(named.location().is_none() && here.location().is_some());
        let (CallSite::Named(a), CallSite::Named(b)) =
            (named, CallSite::named(here.file(), here.line(), here.column()))
        else {
            panic!("named sites")
        };
        assert!(std::ptr::eq(a, b), "a site is stored once");
    }
}
