//! Unit tests of the ContextForge reader, on excerpts of a lab run
//! (`tests/fixtures/lab/contextforge/`, made by `tests/lab/make-fixtures.sh`):
//! the log lines and the database rows of `drop_then_retry`,
//! `target_down_then_retry` and `gateway_timeout_then_retry`.

use super::*;
use crate::journal::{Format, JournalSource, LoadedJournal, detect, load};
use crate::model::{EventKind, Execution, Model};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/lab/contextforge")
        .join(name)
}

/// The database excerpt as a SQLite file, with `edit` (SQL) applied.
fn database(dir: &Path, edit: &str) -> PathBuf {
    let p = dir.join("mcp.db");
    let sql = std::fs::read_to_string(fixture("mcp-excerpt.sql")).unwrap();
    let c = rusqlite::Connection::open(&p).unwrap();
    c.execute_batch(&sql).unwrap();
    c.execute_batch(edit).unwrap();
    p
}

fn read(paths: &[&Path]) -> (Vec<LoadedJournal>, Model) {
    load(
        paths.iter().copied().map(JournalSource::file).collect(),
        None,
        &mut |_| {},
    )
    .unwrap()
}

/// The executions of a tool (exposed name), in time order.
fn of(m: &Model, tool: &str) -> Vec<Execution> {
    m.to_executions()
        .into_iter()
        .filter(|x| x.action().and_then(|a| a.tool()) == Some(tool))
        .collect()
}

fn names(x: &Execution) -> Vec<&'static str> {
    x.events.iter().map(|e| e.kind.name()).collect()
}

/// Whether the journal has a note that starts with `text`.
fn has_note(j: &LoadedJournal, text: &str) -> bool {
    j.notes.iter().any(|n| n.starts_with(text))
}

#[test]
fn the_database_and_the_log_are_detected_as_contextforge() {
    let d = tempfile::tempdir().unwrap();
    let db = database(d.path(), "");
    assert_eq!(
        detect(&JournalSource::file(&db)).unwrap(),
        Format::ContextForge
    );
    let log = fixture("gateway.log");
    assert_eq!(
        detect(&JournalSource::file(&log)).unwrap(),
        Format::ContextForge
    );
    let pg = JournalSource::database("postgres://lab:secret@127.0.0.1:5432/mcp");
    assert_eq!(pg.name, "postgres://lab:***@127.0.0.1:5432/mcp");
    assert_eq!(detect(&pg).unwrap(), Format::ContextForge);
    // A SQLite file without ContextForge's tables is not one.
    let other = d.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE events (seq INTEGER); INSERT INTO events VALUES (1);")
        .unwrap();
    assert_eq!(
        detect(&JournalSource::file(&other)).unwrap(),
        Format::NativeSqlite
    );
}

#[test]
fn the_database_shows_a_drop_a_connect_failure_and_a_gateway_timeout() {
    let d = tempfile::tempdir().unwrap();
    let db = database(d.path(), "");
    let (j, m) = read(&[&db]);
    assert_eq!(j[0].bad_line_count, 0, "{:?}", j[0].bad_lines);

    // drop_then_retry: the client went away; ContextForge cancelled the call.
    let deploy = of(&m, "lab-tools-deploy-release");
    assert_eq!(deploy.len(), 2);
    assert_eq!(
        names(&deploy[0]),
        ["accepted", "dispatched", "cancelled", "delivery_failed"]
    );
    assert_eq!(
        names(&deploy[1]),
        ["accepted", "dispatched", "outcome", "delivered"]
    );
    // The trace that never ended is where the request arrived.
    assert_eq!(
        deploy[0].events[0].source.table(),
        Some(db::TRACES.as_str())
    );

    // target_down_then_retry: nothing reached the upstream, by the text the
    // database keeps (inferred, and saying so).
    let charge = of(&m, "lab-tools-charge-card");
    assert_eq!(
        names(&charge[0]),
        ["accepted", "dispatch_failed"],
        "a ConnectError dispatches nothing"
    );
    let failed = &charge[0].events[1];
    assert!(
        failed
            .facts()
            .inferred
            .as_deref()
            .is_some_and(|w| w.contains("ConnectError")),
        "{:?}",
        failed.facts()
    );

    // gateway_timeout_then_retry: the upstream call failed after dispatch,
    // the database keeps no error type: outcome unknown.
    let migration = of(&m, "lab-tools-run-migration");
    assert_eq!(names(&migration[0]), ["accepted", "dispatched", "outcome"]);
    assert!(matches!(
        migration[0].events[2].kind,
        EventKind::Outcome {
            outcome: OutcomeKind::Unknown,
            ..
        }
    ));

    // Every event: the gateway layer, the correlation id; the accepted
    // event: the tool's annotations, the upstream name, no arguments.
    for x in &m.to_executions() {
        let corr = x.id.strip_prefix(EXECUTION_PREFIX).unwrap();
        for e in &x.events {
            assert_eq!(e.facts().layer, Some(Layer::Gateway));
            assert!(
                e.facts().links.contains(&Link::Correlation(corr.into())),
                "{} {}",
                x.id,
                e.kind.name()
            );
        }
        let (acc, _, action) = x.accepted().unwrap();
        let notes = &acc.facts().notes;
        let ann = notes.iter().find(|(k, _)| *k == "annotations").unwrap();
        assert_eq!(ann.1["idempotentHint"], false);
        assert!(action.get_str("upstream_tool").is_some());
        assert!(matches!(acc.facts().arguments, Arguments::No(_)));
        assert_eq!(action.actor(), Some("contextforge:admin@example.com"));
    }
}

#[test]
fn a_bad_row_is_reported_with_its_table_and_row_and_the_rest_is_used() {
    let d = tempfile::tempdir().unwrap();
    let good = database(d.path(), "");
    let (_, all) = read(&[&good]);
    std::fs::remove_file(&good).unwrap();
    let row: u32 = {
        let db = database(d.path(), "");
        let c = rusqlite::Connection::open(&db).unwrap();
        let r = c
            .query_row("SELECT max(rowid) FROM tool_metrics", [], |r| {
                r.get::<_, u32>(0)
            })
            .unwrap();
        c.execute(
            "UPDATE tool_metrics SET timestamp = 'half past nine' WHERE rowid = ?1",
            [r],
        )
        .unwrap();
        r
    };
    let (j, m) = read(&[&d.path().join("mcp.db")]);
    assert_eq!(j[0].bad_line_count, 1);
    // Rows are the database's lines: "1 of N" counts them all ("1 of 0"
    // said none was read).
    assert!(j[0].lines > u64::from(row), "{} rows", j[0].lines);
    let b = &j[0].bad_lines[0];
    assert_eq!(b.line, row);
    assert!(
        b.message.starts_with(&format!(
            "table `tool_metrics` row {row}: column `timestamp`"
        )),
        "{}",
        b.message
    );
    // The calls are all still there.
    assert_eq!(m.execution_count(), all.execution_count());
}

#[test]
fn the_log_shows_error_types_json_rpc_ids_and_arguments() {
    let (j, m) = read(&[&fixture("gateway.log")]);
    assert_eq!(j[0].bad_line_count, 0, "{:?}", j[0].bad_lines);
    let charge = of(&m, "lab-tools-charge-card");
    assert_eq!(names(&charge[0]), ["accepted", "dispatch_failed"]);
    assert!(
        charge[0].events[1].facts().inferred.is_none(),
        "the log says so"
    );
    let migration = of(&m, "lab-tools-run-migration");
    let EventKind::Outcome { outcome, texts, .. } = &migration[0].events[2].kind else {
        panic!("{:?}", names(&migration[0]));
    };
    assert_eq!(*outcome, OutcomeKind::Unknown);
    assert!(texts.error().is_some_and(|e| e.starts_with("TimeoutError")));
    let deploy = of(&m, "lab-tools-deploy-release");
    assert_eq!(
        names(&deploy[0]),
        ["accepted", "dispatched", "cancelled", "delivery_failed"]
    );
    let (_, call, action) = deploy[0].accepted().unwrap();
    assert!(call.jsonrpc_id.is_some());
    assert_eq!(action.arguments().unwrap()["service"], "catalog");
    assert_eq!(
        action.get_str("upstream_tool").as_deref(),
        Some("deploy_release")
    );
}

#[test]
fn a_bad_log_line_is_reported_with_its_line_and_the_rest_is_used() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("gateway.log")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(
        2,
        "{\"name\": \"mcpgateway\", \"request_id\": \"x\", \"@timestamp\": 7}",
    );
    lines.insert(5, "not json at all");
    let p = d.path().join("gateway.log");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let (j, m) = read(&[&p]);
    let (_, all) = read(&[&fixture("gateway.log")]);
    assert_eq!(j[0].bad_line_count, 2);
    assert_eq!(j[0].bad_lines[0].line, 3);
    assert!(j[0].bad_lines[0].message.contains("@timestamp"));
    assert_eq!(j[0].bad_lines[1].line, 6);
    assert_eq!(m.execution_count(), all.execution_count());
}

#[test]
fn a_traceparent_in_the_body_links_the_clients_span() {
    let line = |rid: &str, name: &str, msg: &str, extra: &str| {
        format!(
            "{{\"name\": \"{name}\", \"levelname\": \"INFO\", \"message\": {}, \"request_id\": \"{rid}\", \"@timestamp\": \"2026-12-01T11:19:00.100000Z\"{extra}}}",
            serde_json::to_string(msg).unwrap()
        )
    };
    let body = r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"lab-tools-get-status","arguments":{"service":"catalog","token":"******"},"_meta":{"traceparent":"00-5867603d79b7273609ab28dbdb0d9538-5869602538aeaacd-03"}}}"#;
    let log = [
        line(
            "c1",
            "mcpgateway.middleware.request_logging_middleware",
            &format!("📩 Incoming request: POST /servers/abc/mcp\nQuery params: {{}}\nHeaders: {{}}\nBody: {body}"),
            ", \"trace_id\": \"0af7651916cd43dd8448eb211c80319c\", \"span_id\": \"b7ad6b7169203331\"",
        ),
        line(
            "c1",
            "mcpgateway.services.structured_logger",
            "[tool_service] MCP tool call started: get_status",
            ", \"user_email\": \"ops@example.com\", \"metadata\": {\"event\": \"mcp_call_started\", \"tool_name\": \"get_status\"}",
        ),
    ]
    .join("\n");
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("gateway.log");
    std::fs::write(&p, log + "\n").unwrap();
    let (_, m) = read(&[&p]);
    let x = &m.to_executions()[0];
    assert_eq!(x.id, "contextforge:c1");
    let (acc, _, action) = x.accepted().unwrap();
    let links = &acc.facts().links;
    assert!(links.contains(&Link::CalledFrom {
        trace: "5867603d79b7273609ab28dbdb0d9538".into(),
        span: "5869602538aeaacd".into()
    }));
    assert!(links.contains(&Link::Span {
        trace: "0af7651916cd43dd8448eb211c80319c".into(),
        span: "b7ad6b7169203331".into()
    }));
    assert_eq!(action.actor(), Some("contextforge:ops@example.com"));
    assert_eq!(action.intent_scope(), Some("contextforge:server:abc"));
    assert!(
        matches!(&acc.facts().arguments, Arguments::Partly(w) if w.contains("token")),
        "{:?}",
        acc.facts().arguments
    );
    // Still in flight at the end of the log: dispatched, nothing more.
    assert_eq!(names(x), ["accepted", "dispatched"]);
}

#[test]
fn urls_times_and_trace_context() {
    assert_eq!(
        redact_url("postgresql://u:p%40ss@db:5432/mcp?sslmode=disable&password=x"),
        "postgresql://u:***@db:5432/mcp?sslmode=disable&password=***"
    );
    assert_eq!(
        redact_url("postgres://u@/mcp?host=/tmp/s"),
        "postgres://u@/mcp?host=/tmp/s"
    );
    let t = db::parse_db_time("timestamp", "2026-12-01 11:16:52.403244").unwrap();
    assert_eq!(
        t,
        db::parse_db_time("timestamp", "2026-12-01 11:16:52.403244+00").unwrap()
    );
    assert_eq!(
        t,
        db::parse_db_time("timestamp", "2026-12-01T12:16:52.403244+01:00").unwrap()
    );
    assert!(db::parse_db_time("timestamp", "soon").is_err());
    assert_eq!(
        traceparent("00-00000000000000000000000000000000-5869602538aeaacd-03"),
        None
    );
    assert_eq!(traceparent("garbage"), None);
    assert_eq!(server_of("POST /servers/9f2/mcp").as_deref(), Some("9f2"));
    assert_eq!(server_of("POST /rpc"), None);
}

/// The fixture log as ContextForge writes it at `LOG_LEVEL=ERROR` (its
/// default): its INFO lines dropped.
fn error_level_log(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(fixture("gateway.log")).unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains("\"levelname\": \"INFO\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let p = dir.join("gateway.log");
    std::fs::write(&p, kept).unwrap();
    p
}

/// At a LOG_LEVEL above INFO, "MCP tool call started" is never logged:
/// its absence says nothing of whether the upstream was called. The first
/// deploy of `drop_then_retry` (the tool acted; the client went away) was
/// read as a dispatch failure, "nothing was sent", and its retry as a
/// `safe_retry`. It is an unknown outcome now, and the journal says what
/// such a log cannot show; delivery ("Request completed", INFO) is not
/// recorded either.
#[test]
fn a_log_without_info_lines_does_not_say_nothing_was_sent() {
    let d = tempfile::tempdir().unwrap();
    let log = error_level_log(d.path());
    let (j, m) = read(&[&log]);
    let deploys = of(&m, "lab-tools-deploy-release");
    assert!(!deploys.is_empty());
    for x in &deploys {
        assert!(!names(x).contains(&"dispatch_failed"), "{:?}", names(x));
    }
    let (outcome, error) = deploys[0]
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Outcome { outcome, texts, .. } => {
                Some((*outcome, texts.error().map(str::to_string)))
            }
            _ => None,
        })
        .expect("an outcome");
    assert_eq!(outcome, crate::model::OutcomeKind::Unknown, "{error:?}");
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("no INFO-level line")),
        "{error:?}"
    );
    assert!(has_note(&j[0], "no INFO-level line"), "{:?}", j[0].notes);
    assert!(!j[0].capabilities.delivery);
    // The same log at INFO keeps its reading.
    let (j, m) = read(&[&fixture("gateway.log")]);
    assert!(j[0].capabilities.delivery);
    assert!(
        !j[0]
            .notes
            .iter()
            .any(|n| n.starts_with("no INFO-level line"))
    );
    assert!(!of(&m, "lab-tools-deploy-release").is_empty());
}

/// The database's structured log at LOG_LEVEL=ERROR reads alike; with no
/// row at all (STRUCTURED_LOGGING_DATABASE_ENABLED off, the default) it
/// records no delivery, as a database without the table.
#[test]
fn a_database_without_info_rows_or_without_rows_records_no_delivery() {
    let d = tempfile::tempdir().unwrap();
    let db = database(
        d.path(),
        "DELETE FROM structured_log_entries WHERE level = 'INFO';",
    );
    let (j, m) = read(&[&db]);
    assert!(!j[0].capabilities.delivery);
    assert!(has_note(&j[0], "no INFO-level line"), "{:?}", j[0].notes);
    for x in of(&m, "lab-tools-deploy-release") {
        assert!(!names(&x).contains(&"dispatch_failed"), "{:?}", names(&x));
    }
    let e = tempfile::tempdir().unwrap();
    let db = database(e.path(), "DELETE FROM structured_log_entries;");
    let (j, _) = read(&[&db]);
    assert!(!j[0].capabilities.delivery);
    assert!(
        has_note(
            &j[0],
            "the database's structured_log_entries table holds no row"
        ),
        "{:?}",
        j[0].notes
    );
}

/// A client may send its own X-Correlation-ID, which ContextForge keeps:
/// here the retry of `drop_then_retry` reuses its first request's id, as
/// retry middleware that sets the id once per logical request does. The two
/// requests were read as one execution dispatched twice, and the real
/// repeat hidden. Each request is its own execution now (`<id>~2`), in the
/// log, in the database, and in both read together, with a note.
#[test]
fn requests_that_share_a_correlation_id_are_executions_of_their_own() {
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("gateway.log")).unwrap();
    let log = d.path().join("gateway.log");
    // The log and the database excerpt come from two runs: each has its
    // own ids (first deploy, retry).
    let (first, retry) = (
        "39962c49b13849849a8a0d49e4eeabef",
        "d3e64e2515bc45fbadbf80111355504b",
    );
    std::fs::write(&log, text.replace(retry, first)).unwrap();
    let (first_db, retry_db) = (
        "36681c0494ce487d986fbd76e1266c42",
        "5fa2d851314b4615947366ff9981fcdb",
    );
    let db = database(
        d.path(),
        &format!(
            "UPDATE structured_log_entries SET correlation_id = '{first_db}', request_id = '{first_db}' WHERE correlation_id = '{retry_db}';"
        ),
    );
    for (path, id) in [(&log, first), (&db, first_db)] {
        let (j, m) = read(&[path]);
        let deploys = of(&m, "lab-tools-deploy-release");
        let ids: Vec<&str> = deploys.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(
            ids,
            [format!("contextforge:{id}"), format!("contextforge:{id}~2")],
            "{path:?}"
        );
        assert!(
            !names(&deploys[0]).contains(&"delivered"),
            "{:?}",
            names(&deploys[0])
        );
        assert!(
            names(&deploys[1]).contains(&"delivered"),
            "{:?}",
            names(&deploys[1])
        );
        assert!(
            has_note(&j[0], "1 correlation id(s) carried several HTTP requests"),
            "{:?}",
            j[0].notes
        );
    }
}

#[test]
fn log_levels_are_read_in_any_case() {
    for l in ["INFO", "info", "Debug", "NOTSET"] {
        assert!(logs_steps(l), "{l}");
    }
    for l in ["ERROR", "warning", "CRITICAL", ""] {
        assert!(!logs_steps(l), "{l}");
    }
}

/// A log rotated while a call ran (`LOG_ROTATION_ENABLED`, `LOG_LEVEL=DEBUG`)
/// may start with 64 KiB of the HTTP and database libraries' lines and no
/// `mcpgateway` logger's: it was refused as an unknown format. A request's
/// line (its `request_id` with the formatter's fields) tells it.
#[test]
fn a_rotated_log_that_starts_with_library_lines_is_detected() {
    let d = tempfile::tempdir().unwrap();
    let line = r#"{"asctime": "2026-12-07T03:23:06", "name": "httpcore.http11", "levelname": "DEBUG", "message": "response_closed.started", "@timestamp": "2026-12-07T03:23:06.888722Z", "hostname": "vm", "process_id": 13900, "request_id": "bc11edad73204e7f87c69eb6217331f6"}"#;
    let p = d.path().join("gateway.log.1");
    std::fs::write(&p, format!("{line}\n").repeat(400)).unwrap();
    assert_eq!(
        detect(&JournalSource::file(&p)).unwrap(),
        Format::ContextForge
    );
    // A JSON log of another program, without a request's fields, is not.
    let other = d.path().join("other.log");
    std::fs::write(
        &other,
        r#"{"name": "app", "levelname": "INFO", "message": "hi", "@timestamp": "2026-12-07T03:23:06Z"}"#,
    )
    .unwrap();
    assert!(detect(&JournalSource::file(&other)).is_err());
}

/// With `LOG_DETAILED_SAMPLE_RATE` below 1, ContextForge logs the request
/// line (and with it the arguments) of some requests only. A retry whose
/// line was not sampled fingerprinted as a call without arguments: a group
/// of its own, `clean`, with nothing pointing at the call it repeats.
#[test]
fn a_retry_whose_request_line_was_not_sampled_points_at_the_call_it_may_repeat() {
    use crate::analysis::{Config, FindingKind, analyze};
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("gateway.log")).unwrap();
    let retry = "d3e64e2515bc45fbadbf80111355504b";
    let unsampled: String = text
        .lines()
        .filter(|l| !(l.contains(retry) && l.contains("Incoming request")))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(unsampled.len() < text.len(), "the retry's request line");
    let log = d.path().join("gateway.log");
    std::fs::write(&log, unsampled).unwrap();
    let (j, m) = read(&[&log]);
    let deploys = of(&m, "lab-tools-deploy-release");
    assert_eq!(deploys.len(), 2);
    let a = analyze(&m, &j, &Config::default());
    let group_of = |id: &str| {
        let x = m.execution_index(&format!("contextforge:{id}")).unwrap();
        &a.groups[a.execution_group[x].get()]
    };
    let (first, again) = (
        group_of("39962c49b13849849a8a0d49e4eeabef"),
        group_of(retry),
    );
    assert_ne!(first.id, again.id, "no arguments: another fingerprint");
    let drift = |g: &crate::analysis::Group| {
        g.findings
            .iter()
            .find(|f| f.kind == FindingKind::FingerprintDrift)
            .map(|f| f.detail.to_string())
            .unwrap_or_default()
    };
    assert!(
        drift(again).contains(&format!("may be the same intent as {}", first.id))
            && drift(again).contains("LOG_DETAILED_SAMPLE_RATE"),
        "{}",
        drift(again)
    );
    assert!(drift(first).contains(&again.id), "{}", drift(first));
    assert!(again.worth_a_look());
}
