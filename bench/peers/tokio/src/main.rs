//! The Tokio peer of `jade perf --peers`: the harness's shapes on a Tokio
//! runtime, timed in this process with its own clock (std::time::Instant).
//!
//! Usage: jade-peer-tokio workers=N SHAPE=COUNT ...
//!
//! workers=1 runs a current_thread runtime, more a multi-thread runtime
//! with that many worker threads. Each SHAPE=COUNT runs one shape with the
//! harness's count (iterations, fan-out rounds, waiters or ticks) after a
//! warm-up of COUNT/10+1 where the shape is a throughput one, and prints one
//! JSON line on stdout (perf/peers_parse.go reads them).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Runtime};
use tokio::sync::{mpsc as tmpsc, oneshot, Notify};

/// Counts the bytes allocated minus freed while COUNTING is set, so the
/// parked shape can report heap bytes per task. Off, it costs one relaxed
/// load per call and no locked instruction.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATED: AtomicI64 = AtomicI64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            ALLOCATED.fetch_add(l.size() as i64, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATED.fetch_sub(l.size() as i64, Ordering::Relaxed);
        }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The fan-out width of spawn_many and the chain length of chained_spawn.
const WIDTH: u64 = 10_000;
/// yield_many: tasks, and yields per task.
const YIELD_TASKS: u64 = 100;
const YIELDS: u64 = 1_000;
/// chan_stream and chan_fan_in: the channel's capacity.
const CHAN_CAP: usize = 1024;
/// chan_fan_in: producers, and messages per producer and round.
const FAN_IN: u64 = 100;
const FAN_IN_M: u64 = 1_000;
/// The fairness ticker's schedule step.
const PERIOD: Duration = Duration::from_millis(1);

fn runtime(workers: usize) -> Runtime {
    let mut b = if workers == 1 {
        Builder::new_current_thread()
    } else {
        let mut b = Builder::new_multi_thread();
        b.worker_threads(workers);
        b
    };
    b.enable_time().build().expect("tokio runtime")
}

/// Runs body as a spawned task (not as block_on's own future), so every
/// shape runs task to task, as the Jade and goroutine sides do.
fn in_task<F, T>(rt: &Runtime, body: F) -> T
where
    F: std::future::Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    rt.block_on(async { tokio::spawn(body).await.expect("peer task") })
}

async fn spawn_join(n: u64) {
    for _ in 0..n {
        tokio::spawn(async { 0u64 }).await.expect("join");
    }
}

async fn ping_pong(n: u64) {
    let (ping, pong) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (pi, po) = (ping.clone(), pong.clone());
    let t = tokio::spawn(async move {
        for _ in 0..n {
            pi.notified().await;
            po.notify_one();
        }
    });
    for _ in 0..n {
        ping.notify_one();
        pong.notified().await;
    }
    t.await.expect("ponger");
}

async fn yield_n(n: u64) {
    for _ in 0..n {
        tokio::task::yield_now().await;
    }
}

async fn spawn_many(rounds: u64) {
    for _ in 0..rounds {
        let hs: Vec<_> = (0..WIDTH).map(|x| tokio::spawn(async move { x })).collect();
        let mut sum = 0;
        for h in hs {
            sum += h.await.expect("join");
        }
        assert_eq!(sum, WIDTH * (WIDTH - 1) / 2);
    }
}

/// Spawns the link k of a chain; link 0 reports the chain's end.
fn link(k: u64, done: oneshot::Sender<()>) {
    tokio::spawn(async move {
        if k == 0 {
            let _ = done.send(());
        } else {
            link(k - 1, done);
        }
    });
}

async fn chained_spawn(rounds: u64) {
    for _ in 0..rounds {
        let (tx, rx) = oneshot::channel();
        link(WIDTH, tx);
        rx.await.expect("chain end");
    }
}

async fn yield_many(rounds: u64) {
    for _ in 0..rounds {
        let hs: Vec<_> = (0..YIELD_TASKS).map(|_| tokio::spawn(yield_n(YIELDS))).collect();
        for h in hs {
            h.await.expect("join");
        }
    }
}

/// n round trips of one u64 each way over two mpsc channels of capacity
/// 1 (Tokio has no rendezvous channel).
async fn chan_ping_pong_mpsc(n: u64) {
    let (atx, mut arx) = tmpsc::channel::<u64>(1);
    let (btx, mut brx) = tmpsc::channel::<u64>(1);
    let t = tokio::spawn(async move {
        while let Some(v) = arx.recv().await {
            btx.send(v).await.expect("pong");
        }
    });
    let mut v = 0;
    for i in 0..n {
        atx.send(i).await.expect("ping");
        v = brx.recv().await.expect("pong");
    }
    drop(atx);
    t.await.expect("ponger");
    assert_eq!(v, n - 1);
}

/// n round trips as requests: the value with a oneshot Sender for the
/// reply over an mpsc channel of capacity 1, the reply over the oneshot.
async fn chan_ping_pong_oneshot(n: u64) {
    let (atx, mut arx) = tmpsc::channel::<(u64, oneshot::Sender<u64>)>(1);
    let t = tokio::spawn(async move {
        while let Some((v, reply)) = arx.recv().await {
            let _ = reply.send(v);
        }
    });
    let mut v = 0;
    for i in 0..n {
        let (rtx, rrx) = oneshot::channel();
        atx.send((i, rtx)).await.expect("ping");
        v = rrx.await.expect("pong");
    }
    drop(atx);
    t.await.expect("ponger");
    assert_eq!(v, n - 1);
}

/// chan_ping_pong: both variants timed as throughput shapes; the faster
/// one's figure is printed, with its name as "variant".
fn chan_ping_pong(rt: &Runtime, shape: &str, workers: usize, n: u64) {
    let time = |f: fn(u64) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>| {
        in_task(rt, f(n / 10 + 1));
        let t0 = Instant::now();
        in_task(rt, f(n));
        t0.elapsed().as_nanos() as f64 / n as f64
    };
    let m = time(|n| Box::pin(chan_ping_pong_mpsc(n)));
    let o = time(|n| Box::pin(chan_ping_pong_oneshot(n)));
    let (ns, variant) = if o < m { (o, "oneshot") } else { (m, "mpsc") };
    println!("{{\"peer\":\"tokio\",\"shape\":\"{shape}\",\"workers\":{workers},\"n\":{n},\"ns\":{ns:.3},\"variant\":\"{variant}\",\"mpsc_ns\":{m:.3},\"oneshot_ns\":{o:.3}}}");
}

/// n u64 values from this task to a consumer task through an mpsc channel
/// of capacity CHAN_CAP.
async fn chan_stream(n: u64) {
    let (tx, mut rx) = tmpsc::channel::<u64>(CHAN_CAP);
    let c = tokio::spawn(async move {
        let mut s = 0u64;
        while let Some(v) = rx.recv().await {
            s += v;
        }
        s
    });
    for i in 0..n {
        tx.send(i).await.expect("send");
    }
    drop(tx);
    assert_eq!(c.await.expect("consumer"), n * (n - 1) / 2);
}

/// rounds of FAN_IN tasks sending FAN_IN_M values each on clones of one
/// mpsc Sender (capacity CHAN_CAP) to this task.
async fn chan_fan_in(rounds: u64) {
    for _ in 0..rounds {
        let (tx, mut rx) = tmpsc::channel::<u64>(CHAN_CAP);
        for _ in 0..FAN_IN {
            let tx = tx.clone();
            tokio::spawn(async move {
                for i in 0..FAN_IN_M {
                    tx.send(i).await.expect("send");
                }
            });
        }
        drop(tx);
        let mut s = 0u64;
        for _ in 0..FAN_IN * FAN_IN_M {
            s += rx.recv().await.expect("recv");
        }
        assert_eq!(s, FAN_IN * (FAN_IN_M * (FAN_IN_M - 1) / 2));
    }
}

/// n waits of a tokio::select! over four mpsc Receivers, the third filled
/// with n values before the clock starts; ns per wait.
fn select4(rt: &Runtime, workers: usize, n: u64) {
    let run = |n: u64| {
        in_task(rt, async move {
            let cap = n as usize;
            let (_ta, mut a) = tmpsc::channel::<u64>(cap);
            let (_tb, mut b) = tmpsc::channel::<u64>(cap);
            let (tc, mut c) = tmpsc::channel::<u64>(cap);
            let (_td, mut d) = tmpsc::channel::<u64>(cap);
            for i in 0..n {
                tc.try_send(i).expect("fill");
            }
            let mut s = 0u64;
            let t0 = Instant::now();
            for _ in 0..n {
                tokio::select! {
                    Some(v) = a.recv() => s = s.wrapping_sub(v + 1),
                    Some(v) = b.recv() => s = s.wrapping_sub(v + 1),
                    Some(v) = c.recv() => s += v,
                    Some(v) = d.recv() => s = s.wrapping_sub(v + 1),
                }
            }
            let el = t0.elapsed();
            assert_eq!(s, n * (n - 1) / 2, "a case that was not ready fired");
            el
        })
    };
    run(n / 10 + 1);
    let ns = run(n).as_nanos() as f64 / n as f64;
    println!("{{\"peer\":\"tokio\",\"shape\":\"select4\",\"workers\":{workers},\"n\":{n},\"ns\":{ns:.3}}}");
}

/// Times one throughput shape: a warm-up of n/10+1, then n, and prints ns
/// per unit (per = units in one count).
fn throughput<F, Fut>(rt: &Runtime, shape: &str, workers: usize, n: u64, per: u64, f: F)
where
    F: Fn(u64) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    in_task(rt, f(n / 10 + 1));
    let t0 = Instant::now();
    in_task(rt, f(n));
    let ns = t0.elapsed().as_nanos() as f64 / (n * per) as f64;
    println!("{{\"peer\":\"tokio\",\"shape\":\"{shape}\",\"workers\":{workers},\"n\":{n},\"ns\":{ns:.3}}}");
}

/// The resident set from /proc/self/statm, in bytes (0 where unreadable).
fn resident() -> i64 {
    let s = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: i64 = s.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// Parks n tasks on one Notify and reports the heap (counted allocations)
/// and resident bytes they take per task, then releases them.
fn parked(rt: &Runtime, workers: usize, n: u64) {
    let gate = Arc::new(Notify::new());
    let (ready, done) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let rss0 = resident();
    COUNTING.store(true, Ordering::SeqCst);
    let heap0 = ALLOCATED.load(Ordering::SeqCst);
    let (g, r, d) = (gate.clone(), ready.clone(), done.clone());
    in_task(rt, async move {
        for _ in 0..n {
            let (g, r, d) = (g.clone(), r.clone(), d.clone());
            tokio::spawn(async move {
                let f = g.notified();
                r.fetch_add(1, Ordering::SeqCst);
                f.await;
                d.fetch_add(1, Ordering::SeqCst);
            });
        }
        while r.load(Ordering::SeqCst) < n as usize {
            tokio::task::yield_now().await;
        }
        // One more turn of the scheduler: every waiter has polled its
        // Notified future at least once and sits in the Notify's list.
        tokio::task::yield_now().await;
    });
    let heap = (ALLOCATED.load(Ordering::SeqCst) - heap0) as f64 / n as f64;
    COUNTING.store(false, Ordering::SeqCst);
    let rss = (resident() - rss0) as f64 / n as f64;
    in_task(rt, async move {
        // notify_waiters wakes only the registered waiters, so repeat it
        // until every one has ended.
        while done.load(Ordering::SeqCst) < n as usize {
            gate.notify_waiters();
            tokio::task::yield_now().await;
        }
    });
    println!("{{\"peer\":\"tokio\",\"shape\":\"parked\",\"workers\":{workers},\"n\":{n},\"heap_bytes\":{heap:.1},\"rss_bytes\":{rss:.1}}}");
}

/// Prints a latency shape's line: exact percentiles of the sorted sample
/// (as bench.Summarize computes them), ran = how many samples there are.
fn latencies(shape: &str, workers: usize, n: u64, mut ds: Vec<i64>, extra: &str) {
    ds.sort_unstable();
    let mut line = format!("{{\"peer\":\"tokio\",\"shape\":\"{shape}\",\"workers\":{workers},\"n\":{n},\"ran\":{}", ds.len());
    if !ds.is_empty() {
        let at = |q: f64| ds[((q * ds.len() as f64) as usize).min(ds.len() - 1)];
        line += &format!(
            ",\"p50_ns\":{},\"p99_ns\":{},\"p999_ns\":{},\"max_ns\":{}",
            at(0.50),
            at(0.99),
            at(0.999),
            ds[ds.len() - 1]
        );
    }
    println!("{line}{extra}}}");
}

/// A thread outside the runtime sleeps 50 µs (the workers park), notifies
/// a task waiting on a Notify and measures until the task runs.
fn wake_latency(rt: Runtime, workers: usize, n: u64) {
    let ev = Arc::new(Notify::new());
    let (tx, rx) = mpsc::sync_channel::<Instant>(1);
    let e = ev.clone();
    let th = std::thread::spawn(move || {
        in_task(&rt, async move {
            for _ in 0..n {
                e.notified().await;
                tx.send(Instant::now()).expect("woke");
            }
        })
    });
    let mut ds = Vec::with_capacity(n as usize);
    for _ in 0..n {
        std::thread::sleep(Duration::from_micros(50));
        let t0 = Instant::now();
        ev.notify_one();
        ds.push(rx.recv().expect("woke").duration_since(t0).as_nanos() as i64);
    }
    th.join().expect("runtime thread");
    latencies("wake_latency", workers, n, ds, "");
}

/// n sleeps of 1 ms; lateness = actual − requested.
fn sleep_lateness(rt: &Runtime, workers: usize, n: u64) {
    let ds = in_task(rt, async move {
        let mut ds = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let t0 = Instant::now();
            tokio::time::sleep(PERIOD).await;
            ds.push((t0.elapsed() - PERIOD).as_nanos() as i64);
        }
        ds
    });
    latencies("sleep_lateness", workers, n, ds, "");
}

/// workers+1 spinning hogs, then a ticker task that sleeps to each deadline
/// start + i × 1 ms and records how late it runs. Tokio does not preempt a
/// task, so the run is bounded: after ticks ms + 1 s the hogs are told to
/// stop, and only the ticks that ran by then are reported (ran < n).
fn fairness_timer(rt: Runtime, workers: usize, ticks: u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let units = Arc::new(AtomicU64::new(0));
    for _ in 0..workers + 1 {
        let (s, u) = (stop.clone(), units.clone());
        rt.spawn(async move {
            let mut x: u64 = 0;
            loop {
                // Volatile, so the loop is not folded into one step per
                // 2^20 iterations: the hog spins as the Go loop does.
                unsafe { std::ptr::write_volatile(&mut x, std::ptr::read_volatile(&x).wrapping_add(1)) };
                if x & ((1 << 20) - 1) == 0 {
                    u.fetch_add(1, Ordering::Relaxed);
                    if s.load(Ordering::Relaxed) {
                        return;
                    }
                }
            }
        });
    }
    let t0 = Instant::now();
    let late = Arc::new(Mutex::new(Vec::with_capacity(ticks as usize)));
    let (l, s) = (late.clone(), stop.clone());
    let (tx, rx) = mpsc::channel();
    rt.spawn(async move {
        let start = tokio::time::Instant::now();
        for i in 1..=ticks {
            let dl = start + PERIOD * i as u32;
            tokio::time::sleep_until(dl).await;
            if s.load(Ordering::Relaxed) {
                break;
            }
            l.lock().unwrap().push((tokio::time::Instant::now() - dl).as_nanos() as i64);
        }
        let _ = tx.send(());
    });
    let bound = PERIOD * ticks as u32 + Duration::from_secs(1);
    let finished = rx.recv_timeout(bound).is_ok();
    let rate = units.load(Ordering::Relaxed) as f64 / t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    if !finished {
        let _ = rx.recv_timeout(Duration::from_secs(5));
    }
    rt.shutdown_timeout(Duration::from_secs(1));
    let ds = std::mem::take(&mut *late.lock().unwrap());
    let extra = format!(",\"bound_ms\":{},\"hog_units_per_s\":{rate:.1}", bound.as_millis());
    latencies("fairness_timer", workers, ticks, ds, &extra);
}

fn main() {
    let mut workers = 0usize;
    let mut shapes = Vec::new();
    for a in std::env::args().skip(1) {
        let (k, v) = a.split_once('=').unwrap_or_else(|| panic!("argument {a:?}: want KEY=VALUE"));
        let v: u64 = v.parse().unwrap_or_else(|_| panic!("argument {a:?}: not a count"));
        if k == "workers" {
            workers = v as usize;
        } else {
            shapes.push((k.to_string(), v));
        }
    }
    assert!(workers >= 1, "workers=N (N >= 1) is required");
    for (shape, n) in shapes {
        match shape.as_str() {
            "spawn_join" => throughput(&runtime(workers), &shape, workers, n, 1, spawn_join),
            "ping_pong" => throughput(&runtime(workers), &shape, workers, n, 1, ping_pong),
            "yield" => throughput(&runtime(workers), &shape, workers, n, 1, yield_n),
            "spawn_many" => throughput(&runtime(workers), &shape, workers, n, WIDTH, spawn_many),
            "chained_spawn" => throughput(&runtime(workers), &shape, workers, n, WIDTH, chained_spawn),
            "yield_many" => throughput(&runtime(workers), &shape, workers, n, YIELD_TASKS * YIELDS, yield_many),
            "parked" => parked(&runtime(workers), workers, n),
            "wake_latency" => wake_latency(runtime(workers), workers, n),
            "sleep_lateness" => sleep_lateness(&runtime(workers), workers, n),
            "fairness_timer" => fairness_timer(runtime(workers), workers, n),
            "chan_ping_pong" | "chan_ping_pong_w2" => chan_ping_pong(&runtime(workers), &shape, workers, n),
            "chan_stream" | "chan_stream_w2" => throughput(&runtime(workers), &shape, workers, n, 1, chan_stream),
            "chan_fan_in" | "chan_fan_in_w2" => throughput(&runtime(workers), &shape, workers, n, FAN_IN * FAN_IN_M, chan_fan_in),
            "select4" => select4(&runtime(workers), workers, n),
            _ => panic!("unknown shape {shape:?}"),
        }
    }
}
