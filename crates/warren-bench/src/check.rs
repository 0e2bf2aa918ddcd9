//! The verdict on a workload's answer: every repeat gave the same answer, and it equals the
//! reference implementation's (unless the check was turned off or the reference could not run).

use serde_json::Value as Json;

use crate::answer::Answer;

/// What the report records about the answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    pub answer: Json,
    /// True only when the reference ran and agreed.
    pub answer_checked: bool,
    /// What was compared, or why nothing was.
    pub check: String,
    /// The reference's answer when it differs.
    pub expected: Option<Json>,
    /// Why the benchmark must fail: runs disagreed, or the answer is wrong.
    pub mismatch: Option<String>,
}

/// What the reference produced for a workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Reference {
    /// `--no-check`.
    Skipped,
    /// The reference could not compute the answer (e.g. a count beyond 128 bits).
    Failed(String),
    Computed(Answer),
}

/// Judges the answer the runs gave (`Err`: they disagreed) against the reference.
pub fn judge(runs: Result<&Answer, String>, reference: &Reference, description: &str) -> Checked {
    let answer = match runs {
        Ok(answer) => answer,
        Err(disagreement) => {
            return Checked {
                answer: Json::Null,
                answer_checked: false,
                check: format!("MISMATCH between runs: {disagreement}"),
                expected: None,
                mismatch: Some(disagreement),
            }
        }
    };
    let same = "every run gave the same answer";
    let unchecked = |check: String| Checked {
        answer: answer.to_json(),
        answer_checked: false,
        check,
        expected: None,
        mismatch: None,
    };
    match reference {
        Reference::Skipped => unchecked(format!("not checked (--no-check); {same}")),
        Reference::Failed(reason) => unchecked(format!(
            "not checked: the reference failed ({reason}); {same}"
        )),
        Reference::Computed(expected) if expected == answer => Checked {
            answer: answer.to_json(),
            answer_checked: true,
            check: format!("{description}; {same}"),
            expected: None,
            mismatch: None,
        },
        Reference::Computed(expected) => Checked {
            answer: answer.to_json(),
            answer_checked: false,
            check: format!("MISMATCH with the reference: {description}"),
            expected: Some(expected.to_json()),
            mismatch: Some(format!(
                "the engine answered {} but the reference computed {}",
                abbreviate(&answer.to_json()),
                abbreviate(&expected.to_json())
            )),
        },
    }
}

/// JSON text cut to a readable length for messages.
fn abbreviate(json: &Json) -> String {
    const CHARS_MAX: usize = 200;
    let text = json.to_string();
    if text.chars().count() <= CHARS_MAX {
        return text;
    }
    let cut: String = text.chars().take(CHARS_MAX).collect();
    format!("{cut}... (see the report)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agreement_is_checked() {
        let answer = Answer::Count(3);
        let checked = judge(Ok(&answer), &Reference::Computed(Answer::Count(3)), "count");
        assert!(checked.answer_checked);
        assert!(checked.mismatch.is_none());
        assert_eq!(checked.answer, serde_json::json!(3));
        assert!(checked.check.starts_with("count; "));
    }

    #[test]
    fn disagreement_with_the_reference_is_a_mismatch() {
        let answer = Answer::Count(3);
        let checked = judge(Ok(&answer), &Reference::Computed(Answer::Count(4)), "count");
        assert!(!checked.answer_checked);
        assert_eq!(checked.expected, Some(serde_json::json!(4)));
        let mismatch = checked.mismatch.unwrap();
        assert!(
            mismatch.contains("answered 3") && mismatch.contains("computed 4"),
            "{mismatch}"
        );
    }

    #[test]
    fn skipped_and_failed_references_are_not_checked_nor_mismatches() {
        let answer = Answer::Count(3);
        for reference in [Reference::Skipped, Reference::Failed("overflow".into())] {
            let checked = judge(Ok(&answer), &reference, "count");
            assert!(!checked.answer_checked);
            assert!(checked.mismatch.is_none());
            assert!(checked.check.starts_with("not checked"));
        }
    }

    #[test]
    fn disagreeing_runs_are_a_mismatch() {
        let checked = judge(
            Err("repeat 2 differs".into()),
            &Reference::Computed(Answer::Count(1)),
            "count",
        );
        assert!(!checked.answer_checked);
        assert_eq!(checked.mismatch.as_deref(), Some("repeat 2 differs"));
    }

    #[test]
    fn long_answers_are_abbreviated_in_messages() {
        let long = Json::Array((0..1000).map(Json::from).collect());
        let text = abbreviate(&long);
        assert!(text.len() < 300 && text.ends_with("(see the report)"));
    }
}
