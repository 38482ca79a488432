//! `Store`: owns the strings and schemas of a registration declared at run time, and lends
//! them out as `&'static` references.
//!
//! # Why
//!
//! `ActionSpec` and `Schema` hold `&'static` references by design (apps declare them as
//! `static` items, the dispatcher copies specs for free, schemas nest without allocation). A
//! registration parsed from JSON has no static storage, so its pieces live here, each in its
//! own heap allocation that never moves or changes, and the specs built from them borrow them
//! as `'static`. Nothing is leaked: the allocations are freed when the `Store` is dropped.
//!
//! # The invariant the owner keeps
//!
//! Every reference handed out must be gone before the `Store` is dropped. The only owner is
//! [`Registration`](crate::declaration::Registration), which keeps the store beside the specs
//! built from it, and the handle drops everything holding those specs (the dispatcher inside
//! the channel) before the registration (see `handle.rs`).

use std::any::Any;
use std::ptr::NonNull;
use std::vec::Vec;

/// Heap allocations that stay put until the store is dropped.
#[derive(Debug, Default)]
pub(crate) struct Store {
    /// Raw pointers from `Box::into_raw`, freed in `Drop`. Raw rather than `Box` because
    /// moving a `Box` (into this vector, or the vector's own growth) asserts unique ownership
    /// of its contents, which the shared references already handed out would contradict.
    kept: Vec<NonNull<dyn Any>>,
}

impl Store {
    /// Moves `value` to the heap and returns a reference to it that stays valid until the
    /// store is dropped.
    ///
    /// # Safety
    ///
    /// The caller must not let the returned reference (or anything copied out of it) outlive
    /// `self`.
    pub(crate) unsafe fn keep<T: Any>(&mut self, value: T) -> &'static T {
        let ptr = NonNull::from(Box::leak(Box::new(value)));
        self.kept.push(ptr);
        // SAFETY: `ptr` comes from a live `Box` allocation that only `Drop` frees, and nothing
        // ever takes a mutable reference to it; the caller keeps every reference within the
        // store's lifetime (this function's contract).
        unsafe { ptr.as_ref() }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        for ptr in self.kept.drain(..) {
            // SAFETY: each pointer came from `Box::leak` in `keep`, is freed exactly once (it is
            // drained), and by `keep`'s contract no reference to it is alive any more.
            drop(unsafe { Box::from_raw(ptr.as_ptr()) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;

    #[test]
    fn kept_values_stay_put_while_the_store_grows() {
        let mut store = Store::default();
        // SAFETY: the references are dropped before the store (end of this scope, in order).
        let first: &'static String = unsafe { store.keep(String::from("first")) };
        let many: Vec<&'static u64> = (0..1000u64).map(|i| unsafe { store.keep(i) }).collect();
        assert_eq!(first, "first");
        assert!(many.iter().enumerate().all(|(i, v)| **v == i as u64));
        drop(many);
        let _ = first;
        drop(store);
    }
}
