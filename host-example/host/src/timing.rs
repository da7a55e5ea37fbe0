//! When a recorded session's model calls happened (`condense replay
//! --timing`): a file of `assistant_timestamps`, one ISO-8601 UTC time per
//! assistant message, in order — the layout of the corpus's `timing/` files.
//! What the replay needs of it is which calls came after the prompt cache
//! expired.

use serde::Deserialize;
use std::path::Path;

/// A timing file that cannot be read, named with what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {what}")]
pub struct TimingError {
    path: String,
    what: String,
}

#[derive(Deserialize)]
struct TimingFile {
    assistant_timestamps: Vec<String>,
}

/// Per assistant message, whether its call came more than `ttl_seconds`
/// after the one before (the first never: its cache was never written).
pub fn cold_calls(path: &Path, ttl_seconds: u32) -> Result<Vec<bool>, TimingError> {
    let error = |what: String| TimingError {
        path: path.display().to_string(),
        what,
    };
    let text = std::fs::read_to_string(path).map_err(|e| error(e.to_string()))?;
    let file: TimingFile = serde_json::from_str(&text).map_err(|e| error(e.to_string()))?;
    let times = file
        .assistant_timestamps
        .iter()
        .enumerate()
        .map(|(i, t)| utc_millis(t).map_err(|e| error(format!("assistant_timestamps[{i}]: {e}"))))
        .collect::<Result<Vec<i64>, TimingError>>()?;
    let ttl_millis = i64::from(ttl_seconds) * 1000;
    Ok((0..times.len())
        .map(|i| i > 0 && times[i] - times[i - 1] > ttl_millis)
        .collect())
}

/// Milliseconds since the Unix epoch of an ISO-8601 UTC time,
/// `YYYY-MM-DDTHH:MM:SS[.fff]Z`. Written here because the workspace has no
/// date crate and this is the one form the recordings use.
fn utc_millis(time: &str) -> Result<i64, String> {
    let bad = || format!("`{time}` is not a UTC time like 2026-02-12T14:12:01.177Z");
    let rest = time.strip_suffix('Z').ok_or_else(bad)?;
    let (date, clock) = rest.split_once('T').ok_or_else(bad)?;
    let number = |s: &str| -> Result<i64, String> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse::<i64>().map_err(|_| bad())
    };
    let mut ymd = date.splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (ymd.next(), ymd.next(), ymd.next()) else {
        return Err(bad());
    };
    let (year, month, day) = (number(y)?, number(m)?, number(d)?);
    let (whole, fraction) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut hms = whole.splitn(3, ':');
    let (Some(h), Some(mi), Some(s)) = (hms.next(), hms.next(), hms.next()) else {
        return Err(bad());
    };
    let (hour, minute, second) = (number(h)?, number(mi)?, number(s)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(format!("`{time}` is out of range"));
    }
    // Milliseconds from the first three digits of the fraction (all digits,
    // so the slice falls between characters).
    number(fraction)?;
    let millis = number(&format!("{fraction:0<3}")[..3])?;
    // Days from 1970-01-01 to the date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

/// Now, as condense keeps times (request times, checkpoints saved, answers
/// journaled): ms since the Unix epoch, 0 on a clock set before it.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `ms` since the Unix epoch as the UTC time [`utc_millis`] reads, to the
/// second: `2026-12-04T10:12:03Z`.
pub fn utc_text(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // The date `days` after 1970-01-01 (Howard Hinnant's civil_from_days,
    // the inverse of the above).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_times_written_read_back() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_text(951_782_400_000), "2000-02-29T00:00:00Z");
        for ms in [0u64, 951_868_800_000, 1_764_843_123_000, 4_102_444_799_000] {
            assert_eq!(utc_millis(&utc_text(ms)).unwrap(), ms as i64);
        }
    }

    #[test]
    fn utc_times_read_as_milliseconds() {
        assert_eq!(utc_millis("1970-01-01T00:00:00Z").unwrap(), 0);
        assert_eq!(
            utc_millis("2000-03-01T00:00:00.5Z").unwrap(),
            951_868_800_500
        );
        assert_eq!(
            utc_millis("2026-02-12T14:12:08.543Z").unwrap()
                - utc_millis("2026-02-12T14:12:01.177Z").unwrap(),
            7_366
        );
        for bad in [
            "2026-02-12 14:12:01Z",
            "2026-02-12T14:12:01",
            "2026-13-01T00:00:00Z",
            "2026-02-12T14:12:01.ééZ",
            "x",
        ] {
            assert!(utc_millis(bad).is_err(), "{bad}");
        }
    }
}
