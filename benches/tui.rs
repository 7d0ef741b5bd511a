//! TUI responsiveness on a large journal, measured headlessly: the App is
//! driven with actions and drawn into a TestBackend, and every step is
//! timed. Figures are reported as ratios against baselines measured in the
//! same run (reading the journal file; drawing an empty frame), so they
//! compare across machines.
//!
//! Run:
//!   cargo bench --bench tui                    # generates 1,000,000 events
//!   cargo bench --bench tui -- big.jsonl       # any native journal
//!   cargo bench --bench tui -- --events 200000
//!
//! A generated journal is kept under target/ and reused.

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use ratatui::widgets::Block;
use retrace::query::{Investigation, LoadStage, Setup};
use retrace::tui::data::{Data, LoadMsg};
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App, render};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The binary's allocator (src/main.rs), so that the figures are the
/// binary's: with the system allocator, freeing a large analysis on one
/// thread slows allocation on every other.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const W: u16 = 160;
const H: u16 = 48;

/// Writes a native journal of about `events` events: executions of five
/// events (accepted … delivered) over 24 tools; every tenth execution
/// repeats the intent of the one before (a retry), every 97th loses its
/// delivery, every 211th has an unknown outcome.
fn generate(path: &Path, events: usize) -> std::io::Result<()> {
    let tools = [
        "deploy_release",
        "create_ticket",
        "restart_service",
        "get_status",
        "list_releases",
        "issue_read",
        "pull_request_read",
        "search_issues",
        "run_migration",
        "rotate_key",
        "scale_service",
        "send_email",
        "post_message",
        "create_branch",
        "merge_pr",
        "close_issue",
        "add_label",
        "update_dns",
        "purge_cache",
        "snapshot_db",
        "invoke_job",
        "upload_artifact",
        "tag_release",
        "page_oncall",
    ];
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    writeln!(
        w,
        r#"{{"kind":"session","session_id":"ses_1","actor":"signed-process:com.example.agent","process":{{"pid":4242,"name":"agent","started_at":"2026-07-22T00:00:00Z"}},"mcp_session_id":"mcp-1","client":"bench/1","authorization":"per_session","started_at":"2026-07-22T00:00:00Z"}}"#
    )?;
    let base = chrono::DateTime::parse_from_rfc3339("2026-07-22T00:00:01Z")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let mut seq = 0u64;
    let mut x = 0usize;
    while (seq as usize) < events {
        let intent = if x % 10 == 9 { x - 1 } else { x };
        let tool = tools[intent % tools.len()];
        let t0 = base + chrono::TimeDelta::milliseconds((x as i64) * 50);
        let at = |ms: i64| {
            (t0 + chrono::TimeDelta::milliseconds(ms))
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        };
        let id = format!("act_{x:08}");
        let mut ev =
            |w: &mut BufWriter<std::fs::File>, ms: i64, body: String| -> std::io::Result<()> {
                seq += 1;
                writeln!(
                    w,
                    r#"{{"kind":"event","seq":{seq},"at":"{}","execution_id":"{id}",{body}}}"#,
                    at(ms)
                )
            };
        ev(
            &mut w,
            0,
            format!(
                r#""event":"accepted","call":{{"call_id":"call_{x}","session_id":"ses_1","jsonrpc_id":{x},"mcp_session_id":"mcp-1","transport":"streamable-http"}},"action":{{"actor":"signed-process:com.example.agent","tool":"{tool}","channel":"http","target":"api.internal.example/{tool}","credential_ref":"svc","method":"POST","arguments":{{"item":{intent},"note":"bench"}},"intent_scope":"run:{}"}},"action_class":"irreversible""#,
                intent / 1000
            ),
        )?;
        ev(
            &mut w,
            2,
            r#""event":"authorized","decision":"session_grant""#.into(),
        )?;
        ev(&mut w, 5, r#""event":"dispatched""#.into())?;
        if x % 211 == 7 {
            ev(&mut w, 30, r#""event":"outcome","outcome":"unknown","error":"timeout","observed_via":"response""#.into())?;
            ev(
                &mut w,
                31,
                r#""event":"delivery_failed","error":"no result""#.into(),
            )?;
        } else {
            ev(
                &mut w,
                20,
                format!(
                    r#""event":"outcome","outcome":"success","target_status":201,"result_reference":"res_{x}","observed_via":"response""#
                ),
            )?;
            if x % 97 == 8 {
                ev(
                    &mut w,
                    21,
                    r#""event":"delivery_failed","error":"stream closed""#.into(),
                )?;
            } else {
                ev(&mut w, 21, r#""event":"delivered""#.into())?;
            }
        }
        x += 1;
    }
    w.flush()
}

struct Stats {
    name: &'static str,
    times: Vec<Duration>,
    actions: Vec<Action>,
}

impl Stats {
    fn worst(&self) -> Duration {
        self.times.iter().copied().max().unwrap_or_default()
    }
    fn median(&self) -> Duration {
        let mut t = self.times.clone();
        t.sort();
        t.get(t.len() / 2).copied().unwrap_or_default()
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let mut events = 1_000_000usize;
    let mut path: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--events" {
            events = it.next().and_then(|n| n.parse().ok()).unwrap_or(events);
        } else {
            path = Some(PathBuf::from(a));
        }
    }
    let path = path.unwrap_or_else(|| {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join(format!("target/bench-journal-{events}.jsonl"));
        if !p.exists() {
            eprintln!("generating {} ({events} events)…", p.display());
            generate(&p, events).expect("write the bench journal");
        }
        p
    });
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "journal: {} ({:.1} MiB)",
        path.display(),
        size as f64 / 1048576.0
    );

    // Baselines.
    let t = Instant::now();
    let bytes = std::fs::read(&path).expect("read the journal");
    let read = t.elapsed();
    drop(bytes);
    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
    let mut empty = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        term.draw(|f| f.render_widget(Block::bordered(), f.area()))
            .unwrap();
        empty.push(t.elapsed());
    }
    empty.sort();
    let frame0 = empty[empty.len() / 2];
    println!(
        "baseline: read the file {:.1} ms; draw an empty {W}x{H} frame {:.3} ms (median)",
        ms(read),
        ms(frame0)
    );

    // First frame: the loading screen, as the binary draws it at once.
    let start = Instant::now();
    let mut app = App::new(
        vec![path.display().to_string()],
        Theme::dark(),
        Rect::new(0, 0, W, H),
    );
    term.draw(|f| render::render(&app, f)).unwrap();
    let first_frame = start.elapsed();

    // Loading and analysis (what the loader thread does), then the overview.
    // The case file does not exist yet: the first decision creates it.
    let case_dir = tempfile::tempdir().expect("a temporary folder");
    let setup = Setup {
        case: Some(case_dir.path().join("bench-case.sqlite")),
        reviewer: Some("bench".into()),
        ..Setup::new(vec![path.clone()])
    };
    let t = Instant::now();
    let mut read_done = None;
    let inv = Investigation::open(&setup, &mut |s| {
        if s == LoadStage::Analysing {
            read_done = Some(t.elapsed());
        }
    })
    .expect("load");
    let total = t.elapsed();
    let loaded = read_done.unwrap_or(total);
    let analysed = total - loaded;
    let t = Instant::now();
    let data = Data::new(inv);
    let prepared = t.elapsed();
    let groups_total = data.search.len();
    app.on_load(LoadMsg::Done(Ok(Box::new(data))));
    let t = Instant::now();
    term.draw(|f| render::render(&app, f)).unwrap();
    let overview = t.elapsed();
    let first_data_frame = start.elapsed();

    // Key → frame.
    let mut step = |app: &mut App, a: Action, s: &mut Stats| {
        let t = Instant::now();
        app.update(a.clone());
        term.draw(|f| render::render(app, f)).unwrap();
        s.times.push(t.elapsed());
        s.actions.push(a);
    };
    let mut scroll = Stats {
        name: "scroll groups (j, PgDn, G, g)",
        times: vec![],
        actions: vec![],
    };
    step(&mut app, Action::ShowGroups, &mut scroll);
    for _ in 0..300 {
        step(&mut app, Action::Down, &mut scroll);
    }
    for _ in 0..50 {
        step(&mut app, Action::PageDown, &mut scroll);
    }
    step(&mut app, Action::Bottom, &mut scroll);
    step(&mut app, Action::Top, &mut scroll);
    let mut all = Stats {
        name: "every group (a), scroll, back",
        times: vec![],
        actions: vec![],
    };
    step(&mut app, Action::ToggleAll, &mut all);
    for _ in 0..100 {
        step(&mut app, Action::PageDown, &mut all);
    }
    step(&mut app, Action::Bottom, &mut all);
    let mut filter = Stats {
        name: "type a fuzzy filter, n/N, clear",
        times: vec![],
        actions: vec![],
    };
    step(&mut app, Action::StartFilter, &mut filter);
    for c in "deploy".chars() {
        step(&mut app, Action::FilterChar(c), &mut filter);
    }
    step(&mut app, Action::FilterBackspace, &mut filter);
    step(&mut app, Action::FilterChar('y'), &mut filter);
    step(&mut app, Action::FilterConfirm, &mut filter);
    for _ in 0..20 {
        step(&mut app, Action::Down, &mut filter);
    }
    step(&mut app, Action::ToggleFilterMode, &mut filter);
    for _ in 0..20 {
        step(&mut app, Action::NextMatch, &mut filter);
    }
    step(&mut app, Action::Back, &mut filter);
    let mut sort = Stats {
        name: "sort and verdict/tool filters",
        times: vec![],
        actions: vec![],
    };
    step(&mut app, Action::SortNext, &mut sort);
    step(&mut app, Action::SortReverse, &mut sort);
    step(&mut app, Action::CycleVerdict, &mut sort);
    step(&mut app, Action::CycleTool, &mut sort);
    step(&mut app, Action::Back, &mut sort);
    let mut open = Stats {
        name: "detail, execution, record scroll, back",
        times: vec![],
        actions: vec![],
    };
    step(&mut app, Action::Open, &mut open);
    step(&mut app, Action::FocusNext, &mut open);
    for _ in 0..10 {
        step(&mut app, Action::Down, &mut open);
    }
    step(&mut app, Action::FocusNext, &mut open);
    step(&mut app, Action::Open, &mut open);
    for _ in 0..4 {
        step(&mut app, Action::Down, &mut open);
    }
    for _ in 0..20 {
        step(&mut app, Action::ScrollDown, &mut open);
    }
    step(&mut app, Action::Back, &mut open);
    step(&mut app, Action::Back, &mut open);
    step(&mut app, Action::ShowSessions, &mut open);
    step(&mut app, Action::FocusNext, &mut open);
    for _ in 0..50 {
        step(&mut app, Action::PageDown, &mut open);
    }

    // The review queue, then one decision: the job (case file write and
    // analysis again, on its thread) and applying its result on the UI
    // thread (new analysis swapped in, views and screens refreshed, frame).
    let mut review = Stats {
        name: "review queue: open, scroll, record",
        times: vec![],
        actions: vec![],
    };
    step(&mut app, Action::ShowReview, &mut review);
    for _ in 0..100 {
        step(&mut app, Action::Down, &mut review);
    }
    step(&mut app, Action::FocusNext, &mut review);
    for _ in 0..10 {
        step(&mut app, Action::Down, &mut review);
    }
    step(&mut app, Action::FocusNext, &mut review);
    let queued = app.data().map_or(0, |d| d.queue.len());
    for a in [Action::Decide, Action::Submit] {
        app.update(a);
    }
    for c in "bench decision".chars() {
        app.update(Action::TextChar(c));
    }
    app.update(Action::Submit);
    app.update(Action::Confirm);
    let mut decision = None;
    for e in app.effects.drain(..).collect::<Vec<_>>() {
        if let retrace::tui::app::Effect::Job(job) = e {
            let data = app.shared_data().expect("loaded");
            let mut msgs = Vec::new();
            let t = Instant::now();
            let last = retrace::tui::jobs::run(*job, &data, &mut |m| msgs.push(m));
            let worker = t.elapsed();
            drop(data);
            msgs.extend(last);
            let t = Instant::now();
            for m in msgs {
                app.on_job(m);
            }
            term.draw(|f| render::render(&app, f)).unwrap();
            decision = Some((worker, t.elapsed()));
        }
    }
    let recorded = app.status.clone().unwrap_or_default();

    println!();
    println!("events: {events} requested; groups: {groups_total}");
    println!(
        "first frame (loading gauge):       {:>9.2} ms = {:>7.1} × empty frame",
        ms(first_frame),
        ratio(first_frame, frame0)
    );
    println!(
        "  read + parse journals:           {:>9.1} ms = {:>7.2} × file read",
        ms(loaded),
        ratio(loaded, read)
    );
    println!(
        "  analysis:                        {:>9.1} ms = {:>7.2} × file read",
        ms(analysed),
        ratio(analysed, read)
    );
    println!(
        "  TUI views (search index, rate, …):  {:>9.1} ms = {:>7.2} × file read",
        ms(prepared),
        ratio(prepared, read)
    );
    println!(
        "  overview frame:                  {:>9.2} ms = {:>7.1} × empty frame",
        ms(overview),
        ratio(overview, frame0)
    );
    println!(
        "first frame with data:             {:>9.1} ms = {:>7.2} × file read",
        ms(first_data_frame),
        ratio(first_data_frame, read)
    );
    println!();
    println!("key press → next frame ({W}x{H}):   median / worst (× empty frame)");
    let mut worst_all = Duration::ZERO;
    for s in [&scroll, &all, &filter, &sort, &open, &review] {
        worst_all = worst_all.max(s.worst());
        println!(
            "  {:<38} {:>8.3} / {:>8.3} ms  ({:>7.1} / {:>8.1} ×)  n={}",
            s.name,
            ms(s.median()),
            ms(s.worst()),
            ratio(s.median(), frame0),
            ratio(s.worst(), frame0),
            s.times.len()
        );
        let mut slow: Vec<(Duration, Action)> = s
            .times
            .iter()
            .copied()
            .zip(s.actions.iter().cloned())
            .collect();
        slow.sort_by_key(|s| std::cmp::Reverse(s.0));
        let top: Vec<String> = slow
            .iter()
            .take(3)
            .map(|(d, a)| format!("{a:?} {:.2} ms", ms(*d)))
            .collect();
        println!("      slowest: {}", top.join(", "));
    }
    println!(
        "worst key → frame: {:.2} ms = {:.1} × empty frame",
        ms(worst_all),
        ratio(worst_all, frame0)
    );
    // The 99th percentile over every key press of every sequence above
    // (nearest rank), the figure the responsiveness target is stated in.
    let mut every: Vec<Duration> = [&scroll, &all, &filter, &sort, &open, &review]
        .iter()
        .flat_map(|s| s.times.iter().copied())
        .collect();
    every.sort();
    let p99 = every
        .get((every.len() * 99).div_ceil(100).saturating_sub(1))
        .copied()
        .unwrap_or_default();
    println!(
        "p99 key → frame: {:.2} ms = {:.1} × empty frame (n={})",
        ms(p99),
        ratio(p99, frame0),
        every.len()
    );
    println!();
    println!("one reviewer decision ({queued} executions in the review queue):");
    match decision {
        Some((worker, ui)) => {
            println!(
                "  job (case file write + analysis, off the UI thread): {:>9.1} ms = {:>5.2} × analysis at load",
                ms(worker),
                ratio(worker, analysed)
            );
            println!(
                "  UI thread (swap in, refresh views, frame):           {:>9.1} ms = {:>5.2} × analysis at load, {:.1} × empty frame",
                ms(ui),
                ratio(ui, analysed),
                ratio(ui, frame0)
            );
            println!("  {recorded}");
        }
        None => println!("  no decision was made: {recorded}"),
    }
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
