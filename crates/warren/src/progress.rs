//! Progress bars for long work (COPY), drawn on standard error only when it is a terminal and
//! the connection asked for them.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use warren_storage::import::CopyProgress;

/// A byte-count progress bar for one COPY.
pub struct CopyBar {
    bar: Option<ProgressBar>,
    label: String,
}

impl CopyBar {
    pub fn new(enabled: bool, label: String) -> Self {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{msg} [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Self { bar, label }
    }
}

impl CopyProgress for CopyBar {
    fn start(&mut self, total: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(total);
            bar.set_message(self.label.clone());
        }
    }

    fn advance(&mut self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }

    fn finish(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
