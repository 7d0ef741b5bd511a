//! Reading TOML files a person wrote (tool contracts, themes): an error
//! that says where, in one line, quoting the line so that it names the key.

/// A TOML error in one line: ``line L, column C (`source line`): message``
/// (1-based, from the error's byte span; the source line names the key), so
/// that it prints on one line after the file name.
pub fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    match e.span() {
        Some(span) => {
            let before = &text.as_bytes()[..span.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
            // The line itself names the key (`class = "sometimes"`).
            let source: String = text
                .lines()
                .nth(line - 1)
                .unwrap_or("")
                .trim()
                .chars()
                .take(80)
                .collect();
            format!("line {line}, column {column} (`{source}`): {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_error_quotes_the_line() {
        let text = "[a]\nclass = \"x\"\nnope = \n";
        let e = toml::from_str::<toml::Value>(text).unwrap_err();
        let m = super::toml_error(text, &e);
        assert!(m.starts_with("line 3, column"), "{m}");
        assert!(m.contains("`nope =`"), "{m}");
    }
}
