//! `SQLite` values as JSON, for the rows of another program's database that sticky copies
//! (opencode's session: into the vault's `rows.json`, into a bundle): integers, reals, text and
//! NULL as themselves, a BLOB as an object holding its bytes in hexadecimal under a key each
//! document names (`hex` in the vault, `blob` in a bundle).

use rusqlite::types::{Value as Sql, ValueRef};
use serde_json::{Value, json};

/// Lower-case hexadecimal.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, byte| {
        out.push_str(&format!("{byte:02x}"));
        out
    })
}

/// The bytes of lower- or upper-case hexadecimal; `None` when `text` is not that.
fn unhex(text: &str) -> Option<Vec<u8>> {
    (text.len() % 2 == 0).then_some(())?;
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

/// `value` as JSON, a BLOB as `{blob_key: "<hex>"}`.
pub fn to_json(value: ValueRef<'_>, blob_key: &str) -> Value {
    match value {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(n) => json!(n),
        ValueRef::Real(x) => json!(x),
        ValueRef::Text(bytes) => json!(String::from_utf8_lossy(bytes)),
        ValueRef::Blob(bytes) => json!({ blob_key: hex(bytes) }),
    }
}

/// The `SQLite` value [`to_json`] made `value` from (a boolean as an integer); `None` for an
/// array, or an object that is not `{blob_key: "<hex>"}`.
pub fn to_sql(value: &Value, blob_key: &str) -> Option<Sql> {
    Some(match value {
        Value::Null => Sql::Null,
        Value::Bool(b) => Sql::Integer(i64::from(*b)),
        Value::Number(n) => n
            .as_i64()
            .map(Sql::Integer)
            .or_else(|| n.as_f64().map(Sql::Real))?,
        Value::String(text) => Sql::Text(text.clone()),
        Value::Object(object) => Sql::Blob(unhex(object.get(blob_key)?.as_str()?)?),
        Value::Array(_) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_comes_back_as_it_went() {
        let values = [
            Sql::Null,
            Sql::Integer(-3),
            Sql::Real(0.5),
            Sql::Text("é".into()),
            Sql::Blob(vec![0, 0xab, 255]),
        ];
        for value in values {
            let json = to_json(ValueRef::from(&value), "hex");
            assert_eq!(to_sql(&json, "hex"), Some(value));
        }
        assert_eq!(
            to_json(ValueRef::Blob(&[1, 0xff]), "blob"),
            json!({"blob": "01ff"})
        );
        assert_eq!(to_sql(&json!(true), "hex"), Some(Sql::Integer(1)));
        for bad in [
            json!([1]),
            json!({"hex": "0"}),
            json!({"hex": "zz"}),
            json!({"x": "00"}),
        ] {
            assert_eq!(to_sql(&bad, "hex"), None, "{bad}");
        }
    }
}
