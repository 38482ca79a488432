//! The in-process [`Target`]: calls go straight into the app's [`Dispatcher`] with its real
//! [`Host`], numbered like daemon requests, and time passes by running the host's `tick`. The
//! dispatcher is enabled for the run (external calls need that) and put back as it was.

use alloc::string::String;
use alloc::vec::Vec;
use core::convert::Infallible;
use core::time::Duration;

use jfgui_proto::channel::{ActionInfo, Call, CallResult, TaskSnapshot};
use jfgui_proto::{ActionError, ActionSpec, Reason};

use super::target::{Reply, Target};
use crate::{Dispatcher, Host};

/// Longest sleep of one [`Target::pause`]: a host that asks to be ticked later is ticked then,
/// but the checks never wait longer than this between two looks.
const MAX_PAUSE: Duration = Duration::from_millis(20);

/// See the module docs.
pub(crate) struct InProcess<'a, H: Host + ?Sized> {
    dispatcher: &'a mut Dispatcher,
    host: &'a mut H,
    was_enabled: bool,
    next_request: u64,
}

impl<'a, H: Host + ?Sized> InProcess<'a, H> {
    pub(crate) fn new(dispatcher: &'a mut Dispatcher, host: &'a mut H) -> Self {
        let was_enabled = dispatcher.is_enabled();
        dispatcher.set_enabled(true);
        InProcess { dispatcher, host, was_enabled, next_request: 1 }
    }
}

impl<H: Host + ?Sized> Drop for InProcess<'_, H> {
    fn drop(&mut self) {
        self.dispatcher.set_enabled(self.was_enabled);
    }
}

impl<H: Host + ?Sized> Target for InProcess<'_, H> {
    type Error = Infallible;

    fn actions(&mut self) -> Result<Vec<ActionInfo>, Infallible> {
        // The dispatcher accepted these names when it was built, so `info` cannot refuse them.
        Ok(self.dispatcher.actions().iter().filter_map(|s| ActionSpec::info(s).ok()).collect())
    }

    fn call(&mut self, call: &Call) -> Result<Reply<CallResult>, Infallible> {
        let request = self.next_request;
        self.next_request += 1;
        Ok(self.dispatcher.handle(self.host, request, call))
    }

    fn task(&mut self, id: &str) -> Result<Reply<TaskSnapshot>, Infallible> {
        Ok(self.dispatcher.tasks().get(id).cloned().ok_or_else(|| {
            ActionError::new(Reason::Task { task: String::from(id) }, "no such task")
        }))
    }

    fn pause(&mut self) {
        let next = self.dispatcher.tick(self.host);
        std::thread::sleep(next.map_or(MAX_PAUSE, |d| d.min(MAX_PAUSE)));
    }
}
