//! The wasmtime sandbox every guest runs in: one [`Engine`] per runtime, every
//! limit in [`Limits`] with one knob each, and a fresh [`Store`] per call.
//!
//! What a guest gets: its own linear memory up to [`Limits::memory_bytes`],
//! wall time up to [`Limits::call_timeout`] (epoch interruption), and WASI with
//! no capabilities: no files, no network, no environment or arguments, an
//! empty stdin, frozen clocks, seeded random sources. Its stdout and stderr go to in-memory pipes
//! that are forwarded to `tracing` after the call.
//!
//! What a failure looks like is decided here too (`Sandbox::failure`),
//! because only the sandbox knows why a call stopped: the epoch deadline, a
//! denied memory growth, or a trap in the guest's own code.

use rand::SeedableRng;
use rand::rngs::StdRng;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};
use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{
    Cache, CacheConfig, Config, Enabled, Engine, InstanceAllocationStrategy,
    PoolingAllocationConfig, ResourceLimiter, Store, StoreLimits, StoreLimitsBuilder, Trap,
    UpdateDeadline,
};
use wasmtime_wasi::clocks::{HostMonotonicClock, HostWallClock};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Every limit a guest runs under. The defaults suit one agent runtime
/// compressing a few hundred messages per model call.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Linear memory one component instance may grow to. Default 256 MiB: a
    /// 140k-token session is about 600 KB of text, and even a few copies of it
    /// with indexes stay far below; a guest that wants more is broken.
    pub memory_bytes: usize,
    /// Wall time one call may take, including the summarizer calls it makes.
    /// Default 5 s, a thousand times what a compression should take.
    pub call_timeout: Duration,
    /// Period of the epoch ticker thread: the deadline's resolution. A call is
    /// interrupted between `call_timeout` and `call_timeout` + 2 ticks after it
    /// started. Default 10 ms.
    pub epoch_tick: Duration,
    /// Native stack that wasm frames of one component may use. Default
    /// 512 KiB (wasmtime's). The summarizer runs nested in the compressor's
    /// call on the same thread, so twice this, plus host frames, must fit in
    /// the stack of the threads that call the runtime (2 MiB for spawned
    /// Rust threads).
    pub max_wasm_stack: usize,
    /// Bytes of stdout and of stderr kept per call. A guest that writes more
    /// sees its stdio closed. Default 64 KiB.
    pub captured_output_bytes: usize,
    /// Calls that may run at once. Sizes the pooling allocator: each call
    /// holds one compressor and at most one summarizer instance. A call beyond
    /// this fails to instantiate (and the middleware fails open). Default 16.
    pub max_concurrent_calls: u32,
    /// Where compiled components are cached between processes.
    pub code_cache: CodeCache,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 256 << 20,
            call_timeout: Duration::from_secs(5),
            epoch_tick: Duration::from_millis(10),
            max_wasm_stack: 512 << 10,
            captured_output_bytes: 64 << 10,
            max_concurrent_calls: 16,
            code_cache: CodeCache::Default,
        }
    }
}

/// wasmtime's cache of compiled code. Compiling a component takes tens to
/// hundreds of milliseconds; a CLI that starts once per model call would pay it
/// every time without the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CodeCache {
    /// No cache: every runtime compiles its components.
    Off,
    /// wasmtime's default directory (`~/.cache/wasmtime` on Linux). Falls back
    /// to no cache, with a warning, when that directory cannot be used.
    Default,
    /// This directory.
    Dir(PathBuf),
}

/// Core instances, memories and tables one component may hold in the pool.
/// Components made by `wasm32-wasip2` Rust have one memory and a few small
/// shim instances; other toolchains (componentize-py, jco) have more.
const CORE_INSTANCES_PER_COMPONENT: u32 = 16;
const MEMORIES_PER_COMPONENT: u32 = 4;
const TABLES_PER_COMPONENT: u32 = 16;

/// The engine and its limits, built once per [`Runtime`](crate::Runtime).
/// Dropping it stops the epoch ticker.
pub(crate) struct Sandbox {
    engine: Engine,
    limits: Limits,
    _epoch_ticker: Ticker,
}

impl Sandbox {
    pub fn new(limits: Limits) -> wasmtime::Result<Sandbox> {
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .max_wasm_stack(limits.max_wasm_stack);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling_config(&limits)));
        if let Some(cache) = code_cache(&limits.code_cache)? {
            config.cache(Some(cache));
        }
        let engine = Engine::new(&config)?;
        let ticking = engine.clone();
        let epoch_ticker = Ticker::start(limits.epoch_tick, move || ticking.increment_epoch());
        Ok(Sandbox {
            engine,
            limits,
            _epoch_ticker: epoch_ticker,
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn compile(&self, wasm: &[u8]) -> wasmtime::Result<Component> {
        Component::new(&self.engine, wasm)
    }

    /// A linker with WASI p2 added. Guests built for wasm32-wasip2 import
    /// WASI interfaces even when they never use them (std links them in);
    /// the capabilities behind them are withheld in [`Sandbox::store`].
    pub fn linker<T: Send + 'static>(&self) -> wasmtime::Result<Linker<StoreData<T>>> {
        let mut linker = Linker::new(&self.engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        Ok(linker)
    }

    /// The deadline of a call that starts now.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.limits.call_timeout
    }

    /// A fresh store for one call: its own memory cap, no WASI capabilities,
    /// captured stdio, and an epoch deadline at `deadline`, moved later by
    /// whatever `credit` is credited meanwhile (the host's time in the `llm`
    /// import, which is not the guest's).
    pub fn store<T: Send>(
        &self,
        host: T,
        deadline: Instant,
        credit: &Arc<Credit>,
    ) -> Store<StoreData<T>> {
        let stdout = MemoryOutputPipe::new(self.limits.captured_output_bytes);
        let stderr = MemoryOutputPipe::new(self.limits.captured_output_bytes);
        // The builder's defaults already grant nothing (no preopens, env, args
        // or network, stdin closed); the clocks are frozen and the random
        // sources seeded, so that a guest cannot make its output depend on
        // the time or on chance: the same input gives the same bytes, even
        // from a guest that hashes with std's randomly seeded `HashMap`.
        let wasi = WasiCtx::builder()
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            .wall_clock(FrozenClock)
            .monotonic_clock(FrozenClock)
            .secure_random(StdRng::seed_from_u64(RANDOM_SEED))
            .insecure_random(StdRng::seed_from_u64(RANDOM_SEED.rotate_left(32)))
            .insecure_random_seed(u128::from(RANDOM_SEED))
            .build();
        let data = StoreData {
            wasi,
            table: ResourceTable::new(),
            memory: MemoryCap::new(self.limits.memory_bytes),
            stdout,
            stderr,
            deadline: Deadline {
                at: deadline,
                credit: credit.clone(),
                credited_before: credit.total(),
            },
            host,
        };
        let mut store = Store::new(&self.engine, data);
        store.limiter(|data| &mut data.memory);
        // When the epoch deadline comes, the call may have been credited
        // time since it was armed: then it goes on until the moved deadline.
        let tick = self.limits.epoch_tick;
        store.epoch_deadline_callback(move |store| {
            let due = store.data().deadline.due();
            let now = Instant::now();
            if now < due {
                Ok(UpdateDeadline::Continue(deadline_ticks(due - now, tick)))
            } else {
                Err(Trap::Interrupt.into())
            }
        });
        self.set_deadline(&mut store, deadline);
        store
    }

    /// (Re)arms the store's epoch deadline at `deadline`, e.g. before a
    /// second call into an instance that lives across calls.
    pub fn set_deadline<T>(&self, store: &mut Store<StoreData<T>>, deadline: Instant) {
        let data = &mut store.data_mut().deadline;
        data.at = deadline;
        data.credited_before = data.credit.total();
        let remaining = deadline.saturating_duration_since(Instant::now());
        store.set_epoch_deadline(deadline_ticks(remaining, self.limits.epoch_tick));
    }

    /// Why a call into the store failed: how it stopped and a one-line
    /// detail, e.g. "wasm trap: interrupt (deadline of 5s exceeded)".
    pub fn stopped<T>(&self, data: &StoreData<T>, error: &wasmtime::Error) -> (Stop, String) {
        let Some(trap) = error.downcast_ref::<Trap>() else {
            // A host error: pool exhausted, a stdio stream over capacity, ...
            return (Stop::Trap, format!("{error:#}"));
        };
        let (kind, why) = match trap {
            Trap::Interrupt => (
                Stop::Deadline,
                format!("deadline of {:?} exceeded", self.limits.call_timeout),
            ),
            // A denied `memory.grow` makes Rust's allocator abort with
            // `unreachable`, so the denial, not the trap code, names the cause.
            _ if let Some(asked) = data.memory.denied => (
                Stop::OutOfMemory,
                format!(
                    "memory limit of {} reached growing to {}",
                    mib(self.limits.memory_bytes),
                    mib(asked)
                ),
            ),
            Trap::UnreachableCodeReached => (Stop::Panic, "panic or abort".to_owned()),
            Trap::StackOverflow => (Stop::StackOverflow, "stack overflow".to_owned()),
            _ => (Stop::Trap, String::new()),
        };
        let mut detail = if why.is_empty() {
            trap.to_string()
        } else {
            format!("{trap} ({why})")
        };
        if let Some(last_words) = data.stderr_tail() {
            detail.push_str(&format!("; stderr: {last_words}"));
        }
        (kind, detail)
    }
}

/// Why a call into a store stopped, as the sandbox sees it; what that means
/// for the component is `crate::failure`'s to say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Ran past its deadline (epoch interruption).
    Deadline,
    /// Was denied memory beyond the cap.
    OutOfMemory,
    /// Panicked or aborted (wasm `unreachable`).
    Panic,
    StackOverflow,
    /// Any other trap, or a host-side error during the call.
    Trap,
}

/// What a store holds: WASI state, the memory cap, captured stdio, its
/// deadline, and the host's own data for the guest's imports.
pub(crate) struct StoreData<T> {
    wasi: WasiCtx,
    table: ResourceTable,
    memory: MemoryCap,
    stdout: MemoryOutputPipe,
    stderr: MemoryOutputPipe,
    deadline: Deadline,
    /// The host's state for the guest's imports.
    pub host: T,
}

/// Time the host spent on a call's behalf that is not the guest's (waiting
/// for the model in the `llm` import), shared by every store of the call:
/// each store's deadline moves later by what is credited while it is armed.
#[derive(Debug, Default)]
pub(crate) struct Credit(AtomicU64);

impl Credit {
    pub fn add(&self, time: Duration) {
        let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn total(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// A store's deadline: `at`, plus what was credited since it was armed.
struct Deadline {
    at: Instant,
    credit: Arc<Credit>,
    credited_before: Duration,
}

impl Deadline {
    fn due(&self) -> Instant {
        self.at + self.credit.total().saturating_sub(self.credited_before)
    }
}

impl<T> StoreData<T> {
    /// Forwards what the guest wrote to stdout and stderr to `tracing`, one
    /// event per line, naming the component.
    pub fn forward_output(&self, component: &dyn std::fmt::Display) {
        for (stream, pipe) in [("stdout", &self.stdout), ("stderr", &self.stderr)] {
            let bytes = pipe.contents();
            for line in String::from_utf8_lossy(&bytes)
                .lines()
                .filter(|l| !l.trim().is_empty())
            {
                tracing::info!(target: "condense::guest", %component, stream, "{line}");
            }
        }
    }

    /// The last lines of stderr that say something (a panic message or
    /// "memory allocation of N bytes failed"), at most 300 characters.
    fn stderr_tail(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("note: run with"))
            .collect();
        let tail = lines[lines.len().saturating_sub(2)..].join(" ");
        if tail.is_empty() {
            return None;
        }
        Some(match tail.char_indices().nth(300) {
            Some((cut, _)) => format!("{}…", &tail[..cut]),
            None => tail,
        })
    }
}

impl<T: Send> WasiView for StoreData<T> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// `StoreLimits` (the memory cap) plus a record of denied growth: a guest
/// usually turns a denied `memory.grow` into an abort, and the record is what
/// tells that abort apart from a panic.
struct MemoryCap {
    limits: StoreLimits,
    denied: Option<usize>,
}

impl MemoryCap {
    fn new(memory_bytes: usize) -> MemoryCap {
        MemoryCap {
            limits: StoreLimitsBuilder::new().memory_size(memory_bytes).build(),
            denied: None,
        }
    }
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum)?;
        if !allowed {
            self.denied = Some(desired);
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn instances(&self) -> usize {
        self.limits.instances()
    }

    fn tables(&self) -> usize {
        self.limits.tables()
    }

    fn memories(&self) -> usize {
        self.limits.memories()
    }
}

/// The pooling allocator preallocates (virtually) a slot per instance, memory
/// and table, which makes the per-call instantiation cheap. Each memory slot is
/// exactly the memory cap, so the pool and [`MemoryCap`] agree on the limit.
fn pooling_config(limits: &Limits) -> PoolingAllocationConfig {
    let components = limits.max_concurrent_calls.clamp(1, u32::MAX / 32) * 2;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(components)
        .total_core_instances(components * CORE_INSTANCES_PER_COMPONENT)
        .total_memories(components * MEMORIES_PER_COMPONENT)
        .total_tables(components * TABLES_PER_COMPONENT)
        .max_memory_size(limits.memory_bytes);
    // A slot's memory is reset after each call. By default that is madvise,
    // and the next call in the slot page-faults back every page it touches:
    // about a tenth of a call between compactions. With PAGEMAP_SCAN (Linux
    // 6.7+; elsewhere ignored) wasmtime finds the pages the call dirtied and
    // resets those in place, up to this much memory, so they stay resident.
    pool.linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
        .pagemap_scan(Enabled::Auto);
    pool
}

/// Memory a slot keeps resident between calls (see [`pooling_config`]): more
/// than a call between compactions touches, a small share of a slot.
const KEEP_RESIDENT_BYTES: usize = 16 << 20;

fn code_cache(choice: &CodeCache) -> wasmtime::Result<Option<Cache>> {
    let mut config = CacheConfig::new();
    match choice {
        CodeCache::Off => return Ok(None),
        CodeCache::Dir(dir) => {
            config.with_directory(dir);
            return Cache::new(config).map(Some);
        }
        CodeCache::Default => {}
    }
    match Cache::new(config) {
        Ok(cache) => Ok(Some(cache)),
        Err(error) => {
            tracing::warn!(
                "compiled-code cache unavailable, components are compiled on every start: {error:#}"
            );
            Ok(None)
        }
    }
}

/// Ticks to allow for `remaining` time. The ticker's phase is unknown (the
/// next tick may come at once), so one tick more than the quotient: a call is
/// never cut before `remaining`, and at most two ticks after it.
fn deadline_ticks(remaining: Duration, tick: Duration) -> u64 {
    let tick = tick.as_nanos().max(1);
    let ticks = remaining.as_nanos().div_ceil(tick);
    u64::try_from(ticks).unwrap_or(u64::MAX - 1) + 1
}

/// A thread that calls `on_tick` every `period` until the ticker is dropped.
struct Ticker {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Ticker {
    fn start(period: Duration, mut on_tick: impl FnMut() + Send + 'static) -> Ticker {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = thread::Builder::new()
            .name("condense-epoch".into())
            .spawn(move || {
                // `recv_timeout` doubles as the sleep: it returns `Timeout`
                // every period and `Disconnected` as soon as the sender drops.
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
                    on_tick();
                }
            })
            .expect("spawn the epoch ticker thread");
        Ticker {
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The seed of every guest's `wasi:random`, the same for every call.
const RANDOM_SEED: u64 = 0x636f_6e64_656e_7365; // "condense"

/// A clock that always reads zero: guests are pure functions of their input.
struct FrozenClock;

impl HostWallClock for FrozenClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for FrozenClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

fn mib(bytes: usize) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_never_cuts_early_and_allows_at_most_two_extra_ticks() {
        let tick = Duration::from_millis(10);
        assert_eq!(deadline_ticks(Duration::ZERO, tick), 1);
        assert_eq!(deadline_ticks(Duration::from_millis(10), tick), 2);
        assert_eq!(deadline_ticks(Duration::from_millis(11), tick), 3);
        assert_eq!(deadline_ticks(Duration::from_secs(5), tick), 501);
        assert_eq!(deadline_ticks(Duration::MAX, Duration::ZERO), u64::MAX);
    }

    #[test]
    fn ticker_ticks_until_dropped() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let ticks = Arc::new(AtomicUsize::new(0));
        let counter = ticks.clone();
        let ticker = Ticker::start(Duration::from_millis(1), move || {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        // Wait for a first tick, however loaded the machine is (bounded).
        for _ in 0..5_000 {
            if ticks.load(Ordering::Relaxed) > 0 {
                break;
            }
            thread::sleep(Duration::from_millis(1));
        }
        drop(ticker);
        let at_drop = ticks.load(Ordering::Relaxed);
        assert!(at_drop > 0, "the ticker never ticked");
        thread::sleep(Duration::from_millis(10));
        assert_eq!(
            ticks.load(Ordering::Relaxed),
            at_drop,
            "the ticker kept ticking after drop"
        );
    }

    #[test]
    fn memory_sizes_read_in_mib() {
        assert_eq!(mib(256 << 20), "256 MiB");
        assert_eq!(mib(1000), "1000 bytes");
    }
}
