//! Time, as condense reads it.
//!
//! - When a recorded session's model calls happened (`condense replay
//!   --timing`): a file of `assistant_timestamps`, one ISO-8601 UTC time per
//!   assistant message, in order — the layout of the corpus's `timing/`
//!   files. What the replay needs of it is which calls came after the
//!   prompt cache expired.
//! - [`Clock`]: the time the host decides by (a breaker's cooldown, how
//!   long a compaction waits for a summary being prepared), real unless a
//!   test gives a [`ManualClock`] that it moves itself.

use serde::Deserialize;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

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

/// The time a decision is made by: a model breaker's cooldown, how long a
/// compaction waits for a summary being prepared. Real time
/// ([`Clock::system`], the default); a test gives its [`ManualClock`], so
/// that what it checks does not depend on how fast the machine is.
#[derive(Clone, Default)]
pub struct Clock(Option<Arc<ManualClock>>);

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            None => f.write_str("Clock::system"),
            Some(manual) => write!(f, "Clock::manual(+{:?})", manual.lock().now),
        }
    }
}

impl Clock {
    /// Real time.
    pub fn system() -> Clock {
        Clock(None)
    }

    /// The time `clock` says.
    pub fn manual(clock: &Arc<ManualClock>) -> Clock {
        Clock(Some(clock.clone()))
    }

    pub fn now(&self) -> Instant {
        match &self.0 {
            None => Instant::now(),
            Some(manual) => manual.start + manual.lock().now,
        }
    }

    /// Now as condense keeps times ([`now_ms`]): ms since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        match &self.0 {
            None => now_ms(),
            Some(manual) => manual.start_ms + manual.lock().now.as_millis() as u64,
        }
    }

    /// [`Condvar::wait_timeout_while`], `timeout` measured on this clock:
    /// waits on `condvar` while `condition` holds, at most `timeout`.
    /// Returns the guard and whether the time ran out with `condition`
    /// still holding.
    pub fn wait_timeout_while<'a, T>(
        &self,
        condvar: &Condvar,
        guard: MutexGuard<'a, T>,
        timeout: Duration,
        mut condition: impl FnMut(&mut T) -> bool,
    ) -> (MutexGuard<'a, T>, bool) {
        let Some(manual) = &self.0 else {
            let (guard, result) = condvar
                .wait_timeout_while(guard, timeout, condition)
                .unwrap_or_else(PoisonError::into_inner);
            return (guard, result.timed_out());
        };
        let mut guard = guard;
        let deadline = manual.lock().now + timeout;
        if manual.skips_waits {
            let timed_out = condition(&mut guard);
            if timed_out {
                manual.advance_to(deadline);
            }
            return (guard, timed_out);
        }
        let _waiting = manual.waiting(deadline);
        loop {
            if !condition(&mut guard) {
                return (guard, false);
            }
            if manual.lock().now >= deadline {
                return (guard, true);
            }
            // `condvar` wakes this thread when the condition may have
            // changed; a clock moved by the test cannot notify a condvar it
            // does not know, so this one is looked at again every
            // millisecond.
            guard = condvar
                .wait_timeout(guard, Duration::from_millis(1))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// A clock that moves only when told ([`ManualClock::advance`]), or, made
/// with [`ManualClock::skipping_waits`], by the whole of any wait on it
/// that would run out: for tests.
#[derive(Debug)]
pub struct ManualClock {
    /// What it read when made (an [`Instant`] has no zero).
    start: Instant,
    /// The same, in ms since the Unix epoch.
    start_ms: u64,
    skips_waits: bool,
    state: Mutex<ManualState>,
    /// Notified when it moves and when a thread starts waiting on it.
    changed: Condvar,
}

#[derive(Debug, Default)]
struct ManualState {
    /// Time since `start`.
    now: Duration,
    /// Until when each thread waiting on it waits (since `start`).
    deadlines: Vec<Duration>,
}

impl ManualClock {
    /// How long [`ManualClock::until_waited_on`] waits for a thread to wait
    /// before failing the test that asked (a test that would hang
    /// otherwise).
    pub const PATIENCE: Duration = Duration::from_secs(60);

    /// A clock that moves only by [`ManualClock::advance`].
    pub fn new() -> Arc<ManualClock> {
        ManualClock::made(false)
    }

    /// A clock on which a wait that would run out does at once, the clock
    /// moving on by the whole wait: for a test where nothing that is waited
    /// for comes until the wait is over.
    pub fn skipping_waits() -> Arc<ManualClock> {
        ManualClock::made(true)
    }

    fn made(skips_waits: bool) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            start: Instant::now(),
            start_ms: now_ms(),
            skips_waits,
            state: Mutex::default(),
            changed: Condvar::new(),
        })
    }

    /// Moves the clock on by `by`.
    pub fn advance(&self, by: Duration) {
        let mut state = self.lock();
        state.now += by;
        drop(state);
        self.changed.notify_all();
    }

    /// Blocks until a thread waits on this clock for a time still to come:
    /// a test advances the clock once the code it tests is waiting. Panics
    /// after [`ManualClock::PATIENCE`] of real time.
    pub fn until_waited_on(&self) {
        let state = self.lock();
        let (_state, result) = self
            .changed
            .wait_timeout_while(state, ManualClock::PATIENCE, |s| {
                !s.deadlines.iter().any(|&d| d > s.now)
            })
            .unwrap_or_else(PoisonError::into_inner);
        assert!(
            !result.timed_out(),
            "nothing waited on the manual clock in {:?}",
            ManualClock::PATIENCE
        );
    }

    fn advance_to(&self, at: Duration) {
        let mut state = self.lock();
        state.now = state.now.max(at);
        drop(state);
        self.changed.notify_all();
    }

    /// Records a thread waiting until `deadline`, for as long as the guard
    /// lives.
    fn waiting(&self, deadline: Duration) -> Waiting<'_> {
        self.lock().deadlines.push(deadline);
        self.changed.notify_all();
        Waiting {
            clock: self,
            deadline,
        }
    }

    fn lock(&self) -> MutexGuard<'_, ManualState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A thread waiting on a [`ManualClock`] ([`ManualClock::waiting`]).
struct Waiting<'a> {
    clock: &'a ManualClock,
    deadline: Duration,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut state = self.clock.lock();
        if let Some(i) = state.deadlines.iter().position(|&d| d == self.deadline) {
            state.deadlines.swap_remove(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flag and what is notified when it is set: what a job's waiters
    /// wait on.
    type Flag = Arc<(Mutex<bool>, Condvar)>;

    fn set(flag: &Flag) {
        *flag.0.lock().unwrap() = true;
        flag.1.notify_all();
    }

    /// Waits on `clock` up to `timeout` for `flag`: whether the time ran
    /// out, and how long it waited on the clock.
    fn wait_for(clock: &Clock, flag: &Flag, timeout: Duration) -> (bool, Duration) {
        let started = clock.now();
        let guard = flag.0.lock().unwrap();
        let (guard, timed_out) = clock.wait_timeout_while(&flag.1, guard, timeout, |set| !*set);
        drop(guard);
        (timed_out, clock.now().duration_since(started))
    }

    #[test]
    fn a_wait_on_a_manual_clock_runs_out_when_the_clock_passes_its_end() {
        let manual = ManualClock::new();
        let clock = Clock::manual(&manual);
        let flag = Flag::default();
        let waiter = {
            let (clock, flag) = (clock.clone(), flag.clone());
            std::thread::spawn(move || wait_for(&clock, &flag, Duration::from_millis(100)))
        };
        manual.until_waited_on();
        manual.advance(Duration::from_millis(99));
        // Still waiting: its end is still to come.
        manual.until_waited_on();
        manual.advance(Duration::from_millis(1));
        assert_eq!(waiter.join().unwrap(), (true, Duration::from_millis(100)));
    }

    #[test]
    fn a_wait_on_a_manual_clock_ends_when_what_it_waits_for_comes() {
        let manual = ManualClock::new();
        let clock = Clock::manual(&manual);
        let flag = Flag::default();
        let waiter = {
            let (clock, flag) = (clock.clone(), flag.clone());
            std::thread::spawn(move || wait_for(&clock, &flag, Duration::from_millis(100)))
        };
        manual.until_waited_on();
        manual.advance(Duration::from_millis(30));
        set(&flag);
        assert_eq!(waiter.join().unwrap(), (false, Duration::from_millis(30)));
        // Nothing to wait for: no time passes.
        assert_eq!(
            wait_for(&clock, &flag, Duration::from_millis(100)),
            (false, Duration::ZERO)
        );
    }

    #[test]
    fn a_clock_skipping_waits_moves_on_by_the_wait_at_once() {
        let clock = Clock::manual(&ManualClock::skipping_waits());
        let flag = Flag::default();
        assert_eq!(
            wait_for(&clock, &flag, Duration::from_secs(60)),
            (true, Duration::from_secs(60))
        );
        set(&flag);
        assert_eq!(
            wait_for(&clock, &flag, Duration::from_secs(60)),
            (false, Duration::ZERO)
        );
    }

    #[test]
    fn the_system_clock_waits_on_the_condvar() {
        let clock = Clock::system();
        let flag = Flag::default();
        assert!(wait_for(&clock, &flag, Duration::ZERO).0);
        set(&flag);
        assert!(!wait_for(&clock, &flag, Duration::from_secs(60)).0);
    }

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
