//! Turning panics inside statements into test failures. [`capture`] runs a closure under
//! `catch_unwind` and returns the panic's message and location instead of unwinding further.
//! A process-wide panic hook (installed by [`install`]) records every panic's description; on
//! a thread inside [`capture`] it prints nothing (unless asked to), elsewhere (Warren's worker
//! threads, the test's own assertions) it also runs the default hook.

use std::any::Any;
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::{Mutex, Once};

static INSTALL: Once = Once::new();
static LAST: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    static CAPTURING: Cell<bool> = const { Cell::new(false) };
}

/// Installs the hook (once per process). With `echo`, captured panics are also printed.
pub fn install(echo: bool) {
    INSTALL.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info: &PanicHookInfo<'_>| {
            let text = describe(info);
            if !CAPTURING.get() {
                default(info);
            } else if echo {
                eprintln!("panic: {text}");
            }
            if let Ok(mut last) = LAST.lock() {
                *last = Some(text);
            }
        }));
    });
}

/// Runs `work`, turning a panic into `Err(description)`.
pub fn capture<R>(work: impl FnOnce() -> R) -> Result<R, String> {
    if let Ok(mut last) = LAST.lock() {
        *last = None;
    }
    let was = CAPTURING.replace(true);
    let outcome = panic::catch_unwind(AssertUnwindSafe(work));
    CAPTURING.set(was);
    outcome.map_err(|payload| {
        let recorded = LAST.lock().ok().and_then(|mut last| last.take());
        recorded.unwrap_or_else(|| payload_text(payload.as_ref()))
    })
}

fn describe(info: &PanicHookInfo<'_>) -> String {
    let message = payload_text(info.payload());
    match info.location() {
        Some(location) => format!("{message} at {}:{}", location.file(), location.line()),
        None => message,
    }
}

fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn captures_message_and_location() {
        install(false);
        assert_eq!(capture(|| 7), Ok(7));
        let error = capture(|| -> u32 { panic!("boom {}", 1) }).unwrap_err();
        assert!(error.starts_with("boom 1 at "), "{error}");
        assert!(error.contains("panic_capture.rs"), "{error}");
    }
}
