//! A small JSON tree that keeps what re-serialization needs to reproduce a
//! producer's own hash preimage: object members in file order and numbers as
//! the exact tokens the producer wrote (docs/formats.md#hashing-what-the-producer-wrote:
//! "re-serializing through serde can change escapes or number formats").
//!
//! Two writers reproduce the producers that chain by re-serializing:
//! * [`Raw::write_python_sorted`]: Python `json.dumps(v, sort_keys=True,
//!   separators=(",", ":"))` with its default `ensure_ascii=True` (mcp-acp);
//! * [`Raw::write_js`]: JavaScript `JSON.stringify(v)` (mcp-audit).

use std::fmt::Write as _;

/// A parsed JSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as the token that was written (also Python's `NaN`,
    /// `Infinity`, `-Infinity`).
    Num(String),
    /// A string, decoded.
    Str(String),
    /// An array.
    Arr(Vec<Raw>),
    /// An object, members in file order (a repeated key keeps its first
    /// position and its last value, as both Python and JavaScript do).
    Obj(Vec<(String, Raw)>),
}

impl Raw {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Raw> {
        match self {
            Raw::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Removes and returns the member `key` of an object.
    pub fn remove(&mut self, key: &str) -> Option<Raw> {
        match self {
            Raw::Obj(m) => m.iter().position(|(k, _)| k == key).map(|i| m.remove(i).1),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Raw::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number as an unsigned integer, if it is one.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Raw::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    /// Python `json.dumps(self, sort_keys=True, separators=(",", ":"))`
    /// (`ensure_ascii=True`): keys sorted by code point, non-ASCII and
    /// controls written as lowercase `\uXXXX` (astral characters as
    /// surrogate pairs), integers as written, floats as Python's `repr`.
    pub fn write_python_sorted(&self, out: &mut String) {
        match self {
            Raw::Null => out.push_str("null"),
            Raw::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Raw::Num(n) => out.push_str(&python_number(n)),
            Raw::Str(s) => python_str(s, out),
            Raw::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_python_sorted(out);
                }
                out.push(']');
            }
            Raw::Obj(m) => {
                let mut members: Vec<&(String, Raw)> = m.iter().collect();
                members.sort_by(|a, b| a.0.cmp(&b.0));
                out.push('{');
                for (i, (k, v)) in members.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    python_str(k, out);
                    out.push(':');
                    v.write_python_sorted(out);
                }
                out.push('}');
            }
        }
    }

    /// JavaScript `JSON.stringify(self)`: members in order, no whitespace,
    /// only `"`, `\`, and controls escaped (`\b \f \n \r \t`, others as
    /// lowercase `\u00XX`), numbers as ECMAScript `Number::toString`.
    pub fn write_js(&self, out: &mut String) {
        match self {
            Raw::Null => out.push_str("null"),
            Raw::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Raw::Num(n) => out.push_str(&js_number(n)),
            Raw::Str(s) => js_str(s, out),
            Raw::Arr(a) => {
                out.push('[');
                for (i, v) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_js(out);
                }
                out.push(']');
            }
            Raw::Obj(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    js_str(k, out);
                    out.push(':');
                    v.write_js(out);
                }
                out.push('}');
            }
        }
    }
}

/// The shortest round-trip decimal digits of a finite non-negative `f` and
/// the exponent of its first digit: `1.5e-7` gives `("15", -7)`.
fn shortest(f: f64) -> (String, i32) {
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (digits.to_string(), exp.parse().unwrap_or(0))
}

/// Places the decimal point in `digits` whose first digit has exponent
/// `exp`, in fixed notation.
fn fixed(digits: &str, exp: i32) -> String {
    if exp < 0 {
        format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{digits}{}", "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    }
}

fn is_integer_token(tok: &str) -> bool {
    !tok.contains(['.', 'e', 'E']) && !matches!(tok, "NaN" | "Infinity" | "-Infinity")
}

/// A number token as Python's `json.dumps` writes the value `json.loads`
/// makes of it: integers exactly (`-0` is `0`), floats as `repr(float)`
/// (fixed notation for exponents -4..15 with at least one decimal,
/// otherwise `1e+16`, `1.5e-05`).
pub fn python_number(tok: &str) -> String {
    if matches!(tok, "NaN" | "Infinity" | "-Infinity") {
        return tok.to_string();
    }
    if is_integer_token(tok) {
        let t = tok.strip_prefix('-').unwrap_or(tok);
        let t = t.trim_start_matches('0');
        return match (tok.starts_with('-'), t.is_empty()) {
            (_, true) => "0".into(),
            (true, false) => format!("-{t}"),
            (false, false) => t.to_string(),
        };
    }
    let Ok(f) = tok.parse::<f64>() else {
        return tok.to_string();
    };
    if f.is_infinite() {
        return if f < 0.0 { "-Infinity" } else { "Infinity" }.into();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, exp) = shortest(f.abs());
    if (-4..16).contains(&exp) {
        let s = fixed(&digits, exp);
        let s = if s.contains('.') { s } else { format!("{s}.0") };
        format!("{sign}{s}")
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        format!(
            "{sign}{m}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// A number token as JavaScript's `JSON.stringify(JSON.parse(tok))` writes
/// it (ECMAScript `Number::toString`: fixed notation for exponents -6..20,
/// otherwise `1e+21`, `1.5e-7`; `-0` is `0`).
pub fn js_number(tok: &str) -> String {
    let Ok(f) = tok.parse::<f64>() else {
        return tok.to_string();
    };
    if !f.is_finite() {
        return "null".into();
    }
    if f == 0.0 {
        return "0".into();
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let (digits, exp) = shortest(f.abs());
    if (-6..21).contains(&exp) {
        format!("{sign}{}", fixed(&digits, exp))
    } else {
        let m = if digits.len() > 1 {
            format!("{}.{}", &digits[..1], &digits[1..])
        } else {
            digits
        };
        format!("{sign}{m}e{}{}", if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

fn short_escape(c: char) -> Option<&'static str> {
    Some(match c {
        '"' => "\\\"",
        '\\' => "\\\\",
        '\n' => "\\n",
        '\r' => "\\r",
        '\t' => "\\t",
        '\u{8}' => "\\b",
        '\u{c}' => "\\f",
        _ => return None,
    })
}

/// A string as Python's `json.dumps` writes it with `ensure_ascii=True`.
pub fn python_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        if let Some(e) = short_escape(c) {
            out.push_str(e);
        } else if (' '..='~').contains(&c) {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for unit in c.encode_utf16(&mut buf) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out.push('"');
}

/// A string as JavaScript's `JSON.stringify` writes it.
pub fn js_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        if let Some(e) = short_escape(c) {
            out.push_str(e);
        } else if (c as u32) < 0x20 {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// Why a text is not JSON, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{what} at byte {at}")]
pub struct SyntaxError {
    /// What was expected or found (`expected ',' or ']'`).
    pub what: &'static str,
    /// Byte offset in the text.
    pub at: usize,
}

/// Parses one JSON text.
///
/// # Errors
/// [`SyntaxError`]: what is wrong, and at which byte.
pub fn parse(text: &str) -> Result<Raw, SyntaxError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
        depth: 0,
    };
    p.ws();
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(p.err("trailing characters"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
    depth: u32,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn err(&self, what: &'static str) -> SyntaxError {
        SyntaxError { what, at: self.i }
    }

    fn eat(&mut self, lit: &str) -> bool {
        if self.s[self.i..].starts_with(lit.as_bytes()) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<Raw, SyntaxError> {
        let Some(&c) = self.s.get(self.i) else {
            return Err(self.err("unexpected end"));
        };
        match c {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => Ok(Raw::Str(self.string()?)),
            b't' if self.eat("true") => Ok(Raw::Bool(true)),
            b'f' if self.eat("false") => Ok(Raw::Bool(false)),
            b'n' if self.eat("null") => Ok(Raw::Null),
            b'N' if self.eat("NaN") => Ok(Raw::Num("NaN".into())),
            b'I' if self.eat("Infinity") => Ok(Raw::Num("Infinity".into())),
            b'-' if self.eat("-Infinity") => Ok(Raw::Num("-Infinity".into())),
            b'-' | b'0'..=b'9' => self.number(),
            _ => Err(self.err("unexpected character")),
        }
    }

    fn enter(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > 256 {
            return Err(self.err("nesting deeper than 256"));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Raw, SyntaxError> {
        self.enter()?;
        self.i += 1;
        let mut m: Vec<(String, Raw)> = Vec::new();
        self.ws();
        if self.eat("}") {
            self.depth -= 1;
            return Ok(Raw::Obj(m));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(self.err("expected a member name"));
            }
            let k = self.string()?;
            self.ws();
            if !self.eat(":") {
                return Err(self.err("expected ':'"));
            }
            self.ws();
            let v = self.value()?;
            match m.iter_mut().find(|(x, _)| *x == k) {
                Some(slot) => slot.1 = v,
                None => m.push((k, v)),
            }
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("}") {
                break;
            }
            return Err(self.err("expected ',' or '}'"));
        }
        self.depth -= 1;
        Ok(Raw::Obj(m))
    }

    fn array(&mut self) -> Result<Raw, SyntaxError> {
        self.enter()?;
        self.i += 1;
        let mut a = Vec::new();
        self.ws();
        if self.eat("]") {
            self.depth -= 1;
            return Ok(Raw::Arr(a));
        }
        loop {
            self.ws();
            a.push(self.value()?);
            self.ws();
            if self.eat(",") {
                continue;
            }
            if self.eat("]") {
                break;
            }
            return Err(self.err("expected ',' or ']'"));
        }
        self.depth -= 1;
        Ok(Raw::Arr(a))
    }

    fn number(&mut self) -> Result<Raw, SyntaxError> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        let digits = |p: &mut Self| {
            let b = p.i;
            while p.i < p.s.len() && p.s[p.i].is_ascii_digit() {
                p.i += 1;
            }
            p.i > b
        };
        if !digits(self) {
            return Err(self.err("expected digits"));
        }
        if self.s.get(self.i) == Some(&b'.') {
            self.i += 1;
            if !digits(self) {
                return Err(self.err("expected digits after '.'"));
            }
        }
        if matches!(self.s.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.s.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return Err(self.err("expected exponent digits"));
            }
        }
        Ok(Raw::Num(self.text[start..self.i].to_string()))
    }

    fn hex4(&mut self) -> Result<u16, SyntaxError> {
        let h = self
            .text
            .get(self.i..self.i + 4)
            .ok_or_else(|| self.err("short \\u escape"))?;
        let v = u16::from_str_radix(h, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.i += 4;
        Ok(v)
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while self.i < self.s.len() && !matches!(self.s[self.i], b'"' | b'\\') {
                if self.s[self.i] < 0x20 {
                    return Err(self.err("control character in string"));
                }
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.s.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(_) => {
                    self.i += 1;
                    let Some(&e) = self.s.get(self.i) else {
                        return Err(self.err("unterminated escape"));
                    };
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let c = if (0xD800..0xDC00).contains(&hi) {
                                if !self.eat("\\u") {
                                    return Err(self.err("lone surrogate"));
                                }
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("lone surrogate"));
                                }
                                let cp = 0x10000
                                    + ((u32::from(hi) - 0xD800) << 10)
                                    + (u32::from(lo) - 0xDC00);
                                char::from_u32(cp)
                            } else {
                                char::from_u32(u32::from(hi))
                            };
                            out.push(c.ok_or_else(|| self.err("lone surrogate"))?);
                        }
                        _ => return Err(self.err("bad escape")),
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn py(s: &str) -> String {
        let mut o = String::new();
        parse(s).unwrap().write_python_sorted(&mut o);
        o
    }

    fn js(s: &str) -> String {
        let mut o = String::new();
        parse(s).unwrap().write_js(&mut o);
        o
    }

    #[test]
    fn python_sorted_ascii_matches_json_dumps() {
        // Expected strings as CPython 3 json.dumps(json.loads(x),
        // sort_keys=True, separators=(",", ":")) prints them.
        assert_eq!(
            py(r#"{"b": 1.50, "a": [true, null, -0.0, 1e+16], "é": "ü😀\u0007/"}"#),
            r#"{"a":[true,null,-0.0,1e+16],"b":1.5,"\u00e9":"\u00fc\ud83d\ude00\u0007/"}"#
        );
        assert_eq!(py(r#"{"x": "\u007f~ "}"#), r#"{"x":"\u007f~ "}"#);
    }

    #[test]
    fn numbers_as_python_and_javascript_write_them() {
        // CPython 3: json.dumps(json.loads(t)); Node: JSON.stringify(JSON.parse(t)).
        let cases = [
            ("1", "1", "1"),
            ("-0", "0", "0"),
            ("1.0", "1.0", "1"),
            ("1.56", "1.56", "1.56"),
            ("30245.47", "30245.47", "30245.47"),
            ("1e16", "1e+16", "10000000000000000"),
            ("1E21", "1e+21", "1e+21"),
            ("0.0001", "0.0001", "0.0001"),
            ("0.00001", "1e-05", "0.00001"),
            ("1e-7", "1e-07", "1e-7"),
            (
                "123456789012345678",
                "123456789012345678",
                "123456789012345680",
            ),
            ("-2.5e-3", "-0.0025", "-0.0025"),
        ];
        for (tok, py, js) in cases {
            assert_eq!(python_number(tok), py, "python {tok}");
            assert_eq!(js_number(tok), js, "js {tok}");
        }
    }

    #[test]
    fn js_keeps_order_and_raw_unicode() {
        assert_eq!(
            js(r#"{ "z": 1, "a": "é\u0001\n", "m": [ {"b":2,"a":1} ] }"#),
            "{\"z\":1,\"a\":\"é\\u0001\\n\",\"m\":[{\"b\":2,\"a\":1}]}"
        );
    }

    #[test]
    fn rejects_what_json_rejects() {
        for bad in [
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            "[1 2]",
            r#""\ud800""#,
            "01x",
            "{",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse(r#"{"a":1,"a":2,"b":3}"#).unwrap(),
            Raw::Obj(vec![
                ("a".into(), Raw::Num("2".into())),
                ("b".into(), Raw::Num("3".into()))
            ])
        );
    }
}
