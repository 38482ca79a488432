//! `Shared`: the part of a handle that stays reachable while one of its callbacks runs (when
//! the rest of the handle is busy): the last error message, and the task table lent to the
//! `execute` and `tick` callbacks so the `jfgui_host_task_*` functions work inside them.

use std::cell::{Cell, RefCell};
use std::ptr::NonNull;
use std::string::String;

use jfgui_host_sdk::TaskTable;

/// See the module docs.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    last_error: RefCell<String>,
    /// The task table while it is lent to a running callback, else `None`.
    lent_tasks: Cell<Option<NonNull<TaskTable>>>,
}

impl Shared {
    pub(crate) fn set_last_error(&self, message: &str) {
        // Never borrowed across a callback, so this cannot fail; if it somehow did, keeping
        // the older message is the harmless outcome.
        if let Ok(mut last) = self.last_error.try_borrow_mut() {
            last.clear();
            last.push_str(message);
        }
    }

    pub(crate) fn last_error(&self) -> String {
        self.last_error.borrow().clone()
    }

    /// Runs `f` (which calls into the app) with `tasks` reachable through
    /// [`with_lent_tasks`](Shared::with_lent_tasks).
    pub(crate) fn lend_tasks<R>(&self, tasks: &mut TaskTable, f: impl FnOnce() -> R) -> R {
        /// Restores the previous state even if `f` unwinds.
        struct Restore<'a>(&'a Shared, Option<NonNull<TaskTable>>);
        impl Drop for Restore<'_> {
            fn drop(&mut self) {
                self.0.lent_tasks.set(self.1);
            }
        }
        let _restore = Restore(self, self.lent_tasks.replace(Some(NonNull::from(tasks))));
        f()
    }

    /// Runs `op` on the lent task table; `None` when no callback holds it.
    pub(crate) fn with_lent_tasks<R>(&self, op: impl FnOnce(&mut TaskTable) -> R) -> Option<R> {
        let ptr = self.lent_tasks.get()?;
        // Not reentrant while `op` runs: `op` is library code that never calls the app.
        self.lent_tasks.set(None);
        // SAFETY: the pointer was made from a `&mut TaskTable` in `lend_tasks`, whose frame is
        // suspended inside the app's callback and does not use the table until that callback
        // returns; the pointer is taken out of the cell above, so this is the only reference
        // until it is put back below.
        let result = op(unsafe { &mut *ptr.as_ptr() });
        self.lent_tasks.set(Some(ptr));
        Some(result)
    }
}
