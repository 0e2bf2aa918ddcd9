//! The warnings of a connection: the rows COPY and LOAD FROM skipped with `IGNORE_ERRORS`, each
//! with the id of its statement, as `show_warnings()` lists them. The log is shared with the
//! queries the connection runs, because a LOAD FROM records its skipped rows while its result
//! streams, after the statement has returned.

use std::sync::{Arc, Mutex, MutexGuard};

use warren_storage::import::CopyWarning;

/// A connection's warnings, at most `warning_limit` of them (later ones are dropped, as Kùzu
/// drops them).
#[derive(Debug, Default)]
pub struct WarningLog {
    entries: Mutex<Vec<(u64, CopyWarning)>>,
}

impl WarningLog {
    fn lock(&self) -> MutexGuard<'_, Vec<(u64, CopyWarning)>> {
        // A panic while holding the lock leaves a valid vector: keep using it.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Keeps `warnings` of statement `query_id` while fewer than `limit` are kept.
    pub fn record(&self, query_id: u64, limit: usize, warnings: Vec<CopyWarning>) {
        let mut entries = self.lock();
        let room = limit.saturating_sub(entries.len());
        entries.extend(warnings.into_iter().take(room).map(|w| (query_id, w)));
    }

    /// The kept warnings, oldest first.
    pub fn entries(&self) -> Vec<(u64, CopyWarning)> {
        self.lock().clone()
    }

    pub fn clear(&self) {
        self.lock().clear();
    }
}

/// Where one statement records its warnings: the connection's log, the statement's id and the
/// `warning_limit` it ran with.
#[derive(Clone, Debug)]
pub struct WarningSink {
    pub log: Arc<WarningLog>,
    pub query_id: u64,
    pub limit: usize,
}

impl WarningSink {
    pub fn record(&self, warnings: Vec<CopyWarning>) {
        self.log.record(self.query_id, self.limit, warnings);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn warning(line_number: u64) -> CopyWarning {
        CopyWarning {
            message: "bad".into(),
            file_path: "f.csv".into(),
            line_number,
            record: String::new(),
        }
    }

    #[test]
    fn keeps_at_most_the_limit_and_clears() {
        let log = WarningLog::default();
        log.record(1, 3, vec![warning(1), warning(2)]);
        log.record(2, 3, vec![warning(3), warning(4)]);
        let kept: Vec<(u64, u64)> = log
            .entries()
            .iter()
            .map(|(query, w)| (*query, w.line_number))
            .collect();
        assert_eq!(kept, [(1, 1), (1, 2), (2, 3)]);
        log.clear();
        assert!(log.entries().is_empty());
    }
}
