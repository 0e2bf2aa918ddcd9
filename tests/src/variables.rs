//! `${NAME}` substitution in statement text and expectations: names defined by `-SET`, plus
//! `${KUZU_ROOT_DIRECTORY}` and `${DATABASE_PATH}`, which the runner supplies. Unknown names
//! are left as written.

use std::collections::BTreeMap;

/// `text` with every `${NAME}` whose name `values` defines replaced by its value.
pub fn substitute(text: &str, values: &BTreeMap<String, String>) -> String {
    let mut output = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        output.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after
            .find('}')
            .and_then(|end| Some((values.get(&after[..end])?, end)))
        {
            Some((value, end)) => {
                output.push_str(value);
                rest = &after[end + 1..];
            }
            None => {
                output.push_str("${");
                rest = after;
            }
        }
    }
    output.push_str(rest);
    output
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_known_names_only() {
        let values = BTreeMap::from([("A".to_string(), "1".to_string())]);
        assert_eq!(substitute("x ${A} ${B} ${A}${", &values), "x 1 ${B} 1${");
    }
}
