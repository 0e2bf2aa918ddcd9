//! NumPy `.npy` files for `COPY t FROM ('a.npy', 'b.npy', ...) BY COLUMN`: each file is one
//! column, a one-dimensional array of scalars or a two-dimensional array whose rows fill a
//! fixed-size ARRAY property. Little-endian booleans, integers and floats in C order.

use std::path::Path;

use warren_common::{Error, Result, Value};

/// The magic bytes every `.npy` file starts with.
const MAGIC: &[u8] = b"\x93NUMPY";
/// Header text longer than this is not a NumPy header (NumPy writes a few hundred bytes).
const HEADER_BYTES_MAX: usize = 64 * 1024;

/// The element type of an array: kind (`b`, `i`, `u`, `f`) and width in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Element {
    kind: u8,
    bytes: usize,
}

/// A parsed header: element type and shape.
#[derive(Debug, PartialEq, Eq)]
struct Header {
    element: Element,
    shape: Vec<usize>,
}

fn npy_error(path: &Path, message: impl std::fmt::Display) -> Error {
    Error::Copy {
        location: path.display().to_string(),
        message: message.to_string(),
    }
}

/// Reads one column: one value per row (a LIST of values for two-dimensional arrays).
pub fn read_column(path: &Path) -> Result<Vec<Value>> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::Io(format!("Cannot open file {}: {e}", path.display())))?;
    let (header, data) = split_header(&bytes).map_err(|m| npy_error(path, m))?;
    let header = parse_header(header).map_err(|m| npy_error(path, m))?;
    let count: usize = header.shape.iter().product();
    if data.len() < count * header.element.bytes {
        return Err(npy_error(path, "the file is shorter than its header says"));
    }
    let scalars = (0..count)
        .map(|i| decode(header.element, &data[i * header.element.bytes..]))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|m| npy_error(path, m))?;
    match header.shape.as_slice() {
        [_] => Ok(scalars),
        [_, width] if *width > 0 => Ok(scalars
            .chunks(*width)
            .map(|c| Value::list(c.to_vec()))
            .collect()),
        _ => Err(npy_error(
            path,
            "only one- and two-dimensional arrays can be copied",
        )),
    }
}

/// Reads every file as one column and joins them into rows; the columns must be equally long.
pub fn read_rows(files: &[std::path::PathBuf]) -> Result<Vec<Vec<Value>>> {
    let columns = files
        .iter()
        .map(|f| read_column(f))
        .collect::<Result<Vec<_>>>()?;
    let rows = columns.first().map_or(0, Vec::len);
    if let Some((file, _)) = files.iter().zip(&columns).find(|(_, c)| c.len() != rows) {
        return Err(npy_error(
            file,
            format!("Number of rows in the npy files do not match: expected {rows}."),
        ));
    }
    Ok((0..rows)
        .map(|r| columns.iter().map(|c| c[r].clone()).collect())
        .collect())
}

/// The header text and the data after it.
fn split_header(bytes: &[u8]) -> std::result::Result<(&str, &[u8]), String> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err("not a NumPy .npy file".into());
    }
    let (length, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        version => return Err(format!("unsupported .npy version {version}")),
    };
    if length > HEADER_BYTES_MAX || bytes.len() < start + length {
        return Err("the .npy header is damaged".into());
    }
    let text = std::str::from_utf8(&bytes[start..start + length])
        .map_err(|_| "the .npy header is not text".to_string())?;
    Ok((text, &bytes[start + length..]))
}

/// The quoted value after `'key':` in the header dict.
fn field<'h>(header: &'h str, key: &str) -> std::result::Result<&'h str, String> {
    let pattern = format!("'{key}':");
    let at = header
        .find(&pattern)
        .ok_or_else(|| format!("the .npy header has no {key}"))?;
    Ok(header[at + pattern.len()..].trim_start())
}

fn parse_header(header: &str) -> std::result::Result<Header, String> {
    let descr = field(header, "descr")?;
    let descr = descr
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or("the .npy dtype is not a string")?;
    let element = parse_descr(descr)?;
    if field(header, "fortran_order")?.starts_with("True") {
        return Err("Fortran-ordered .npy arrays are not supported".into());
    }
    let shape = field(header, "shape")?;
    let shape = shape
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or("the .npy shape is not a tuple")?;
    let shape = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad .npy shape dimension {s}"))
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(Header { element, shape })
}

/// `<i8`, `<f4`, `|b1`, ...: little-endian (or byte-order-free) booleans, integers, floats.
fn parse_descr(descr: &str) -> std::result::Result<Element, String> {
    let unsupported = || format!("unsupported .npy dtype {descr}");
    let bytes = descr.as_bytes();
    if bytes.len() < 3 || !matches!(bytes[0], b'<' | b'|' | b'=') {
        return Err(unsupported());
    }
    let width: usize = descr[2..].parse().map_err(|_| unsupported())?;
    match (bytes[1], width) {
        (b'b', 1) | (b'i' | b'u', 1 | 2 | 4 | 8) | (b'f', 4 | 8) => Ok(Element {
            kind: bytes[1],
            bytes: width,
        }),
        _ => Err(unsupported()),
    }
}

/// One little-endian element at the start of `data`.
fn decode(element: Element, data: &[u8]) -> std::result::Result<Value, String> {
    let mut raw = [0u8; 8];
    raw[..element.bytes].copy_from_slice(&data[..element.bytes]);
    let unsigned = u64::from_le_bytes(raw);
    Ok(match (element.kind, element.bytes) {
        (b'b', _) => Value::Bool(raw[0] != 0),
        (b'i', 1) => Value::Int8(raw[0] as i8),
        (b'i', 2) => Value::Int16(unsigned as u16 as i16),
        (b'i', 4) => Value::Int32(unsigned as u32 as i32),
        (b'i', _) => Value::Int64(unsigned as i64),
        (b'u', 1) => Value::UInt8(raw[0]),
        (b'u', 2) => Value::UInt16(unsigned as u16),
        (b'u', 4) => Value::UInt32(unsigned as u32),
        (b'u', _) => Value::UInt64(unsigned),
        (b'f', 4) => Value::Float(f32::from_bits(unsigned as u32)),
        (b'f', _) => Value::Double(f64::from_bits(unsigned)),
        (kind, _) => return Err(format!("unsupported .npy element kind {}", kind as char)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-1 `.npy` file with the given header dict and data.
    fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut bytes = MAGIC.to_vec();
        bytes.extend_from_slice(&[1, 0]);
        bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        bytes.extend_from_slice(dict.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    #[test]
    fn reads_one_and_two_dimensional_arrays() {
        let dir = tempfile::tempdir().unwrap();
        let one = dir.path().join("one.npy");
        let data: Vec<u8> = [1i32, -2].iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(
            &one,
            npy(
                "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
        )
        .unwrap();
        assert_eq!(
            read_column(&one).unwrap(),
            vec![Value::Int32(1), Value::Int32(-2)]
        );
        let two = dir.path().join("two.npy");
        let data: Vec<u8> = [1.5f64, 2.0, 3.0, 4.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        std::fs::write(
            &two,
            npy(
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }",
                &data,
            ),
        )
        .unwrap();
        let rows = read_rows(&[one, two]).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1][0], Value::Int32(-2));
        assert_eq!(
            rows[0][1],
            Value::list(vec![Value::Double(1.5), Value::Double(2.0)])
        );
    }

    #[test]
    fn rejects_big_endian_and_damaged_files() {
        assert!(parse_descr(">i8").is_err());
        assert!(parse_descr("<c16").is_err());
        assert!(split_header(b"\x93NUMPY\x01\x00\xff\x00{").is_err());
        assert!(split_header(b"not numpy").is_err());
    }
}
