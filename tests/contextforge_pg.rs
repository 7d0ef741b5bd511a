//! ContextForge on a live PostgreSQL server: a throw-away server (the
//! binaries of `LAB_PG_BIN`, else the newest `/usr/lib/postgresql/N/bin`),
//! listening on 127.0.0.1 and on a unix socket in a temporary folder, is
//! loaded with the lab's `contextforge-pg/dump.sql` (`psql -f`), and the
//! real binary reads it by URL: every scenario gets its verdict
//! (`common::lab::CONTEXTFORGE`), alone and with the run's `gateway.log`; a
//! `--since/--until` run reads only the requests of one scenario, and says
//! that the window went into the query. PostgreSQL refuses to run as root:
//! as root, `initdb`, `pg_ctl` and `psql` run as `nobody` (`runuser`),
//! which owns only the data and socket folders. The server is stopped by
//! a guard when the test ends, also on a panic. Skipped with a notice
//! without the binaries or the lab output; a failure under `CI=true`.

mod common;

use common::lab;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("LAB_PG_BIN").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((n, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A command of the server's, as `nobody` when this runs as root.
fn pg(bin: &Path, tool: &str, as_nobody: bool) -> Command {
    if as_nobody {
        let mut c = Command::new("runuser");
        c.args(["-u", "nobody", "--"]).arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    }
}

fn ok(what: &str, o: std::io::Result<Output>) -> Output {
    let o = o.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The running server; stops it when dropped.
struct Server {
    bin: PathBuf,
    data: PathBuf,
    socket: PathBuf,
    port: u16,
    nobody: bool,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let stopped = pg(&self.bin, "pg_ctl", self.nobody)
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !stopped {
            // pg_ctl failed: the postmaster's pid is the first line of its pid file.
            if let Ok(pidfile) = std::fs::read_to_string(self.data.join("postmaster.pid"))
                && let Some(pid) = pidfile.lines().next().map(str::trim)
                && pid.parse::<u32>().is_ok()
            {
                let _ = Command::new("kill").args(["-9", pid]).status();
            }
        }
    }
}

impl Server {
    fn start(bin: &Path) -> Server {
        let nobody = is_root();
        let dir = tempfile::Builder::new()
            .prefix("retrace-pg")
            .tempdir_in("/tmp")
            .unwrap();
        let data = dir.path().join("data");
        let socket = dir.path().join("socket");
        for d in [&data, &socket] {
            std::fs::create_dir(d).unwrap();
        }
        if nobody {
            // The folder itself stays root's and read-only to others; the
            // server owns only its data and socket folders.
            ok(
                "chmod",
                Command::new("chmod").arg("755").arg(dir.path()).output(),
            );
            ok(
                "chown",
                Command::new("chown")
                    .arg("nobody")
                    .arg(&data)
                    .arg(&socket)
                    .output(),
            );
        }
        ok(
            "initdb",
            pg(bin, "initdb", nobody)
                .arg("-D")
                .arg(&data)
                .args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])
                .output(),
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let server = Server {
            bin: bin.to_path_buf(),
            data: data.clone(),
            socket: socket.clone(),
            port,
            nobody,
            _dir: dir,
        };
        ok(
            "pg_ctl start",
            pg(bin, "pg_ctl", nobody)
                .arg("-D")
                .arg(&data)
                .arg("-l")
                .arg(socket.join("server.log"))
                .arg("-o")
                .arg(format!(
                    "-k {} -h 127.0.0.1 -p {port} -c fsync=off",
                    socket.display()
                ))
                .args(["-w", "-t", "60", "start"])
                .output(),
        );
        server
    }

    fn psql(&self, db: &str) -> Command {
        let mut c = pg(&self.bin, "psql", self.nobody);
        c.arg("-h")
            .arg(&self.socket)
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", db])
            .args(["-v", "ON_ERROR_STOP=1", "-q"]);
        c
    }

    /// Loads a pg_dump file into a new database `db`.
    fn load(&self, db: &str, dump: &Path) {
        ok(
            "createdb",
            self.psql("postgres")
                .arg("-c")
                .arg(format!("CREATE DATABASE {db}"))
                .output(),
        );
        // The dump goes where the server's user can read it.
        let copy = self.socket.join("dump.sql");
        std::fs::copy(dump, &copy).unwrap();
        ok(
            "chmod dump",
            Command::new("chmod").arg("644").arg(&copy).output(),
        );
        ok("psql -f", self.psql(db).arg("-f").arg(&copy).output());
    }

    fn tcp_url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    fn socket_url(&self, db: &str) -> String {
        format!(
            "postgresql://postgres@/{db}?host={}&port={}",
            self.socket.display(),
            self.port
        )
    }
}

/// The `rows read: … structured_log_entries N …` count a run notes.
fn rows_read(stderr: &str, table: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.split_once("rows read: ").map(|(_, r)| r.to_string()))
        .and_then(|r| {
            r.split(", ")
                .find_map(|kv| kv.strip_prefix(&format!("{table} "))?.parse().ok())
        })
        .unwrap_or_else(|| panic!("no `rows read` of {table} in: {stderr}"))
}

fn time_of(truth_calls: &serde_json::Value, i: usize, key: &str) -> chrono::DateTime<chrono::Utc> {
    let s = truth_calls[i][key].as_str().expect("a time");
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

#[test]
fn a_live_postgresql_database_gets_the_same_verdicts_and_the_window_narrows_its_queries() {
    const T: &str =
        "a_live_postgresql_database_gets_the_same_verdicts_and_the_window_narrows_its_queries";
    let Some(bin) = bin_dir() else {
        lab::skip(
            T,
            "no PostgreSQL server binaries (initdb) in /usr/lib/postgresql/N/bin or LAB_PG_BIN",
        );
        return;
    };
    let Some(dir) = lab::lab_dir(T) else { return };
    let Some(system) = lab::system_truth(&dir, "contextforge-pg", T) else {
        return;
    };
    let truth = dir.join("truth.json");
    let lab = dir.join("contextforge-pg");
    let dump = lab.join("dump.sql");
    let server = Server::start(&bin);
    server.load("contextforge", &dump);
    let url = server.tcp_url("contextforge");

    let (found, all_err) = lab::groups_and_notes(&[&url], &[]);
    lab::check("contextforge-pg", &truth, &found, lab::CONTEXTFORGE);
    lab::one_group_per_scenario("contextforge-pg", &truth, &found);
    let log = lab.join("gateway.log").display().to_string();
    let (found, _) = lab::groups_and_notes(&[&url, &log], &[]);
    lab::check("contextforge-pg", &truth, &found, lab::CONTEXTFORGE);

    // One scenario's window, over the unix socket: its requests only.
    let target = system["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["id"] == "target_down_then_retry")
        .unwrap();
    let calls = &target["calls"];
    let n = calls.as_array().unwrap().len();
    let since = time_of(calls, 0, "sent_at") - chrono::TimeDelta::milliseconds(50);
    // Up to the last call's answer: the gateway stamps a call's
    // `tool_metrics` row when the call ends, which on a loaded machine is
    // hundreds of milliseconds after it was sent.
    let until = time_of(calls, n - 1, "ended_at") + chrono::TimeDelta::milliseconds(50);
    let fmt =
        |t: chrono::DateTime<chrono::Utc>| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
    let (found, err) = lab::groups_and_notes(
        &[server.socket_url("contextforge")],
        &["--since", &fmt(since), "--until", &fmt(until)],
    );
    let tool = target["exposed_tool"].as_str().unwrap();
    let tools: Vec<&str> = found.iter().map(|g| g["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, [tool], "only the scenario's calls: {found:?}");
    assert_eq!(found[0]["verdict"], "safe_retry");
    assert!(
        err.contains("was applied in the database's queries"),
        "{err}"
    );
    let (narrow, wide) = (
        rows_read(&err, "structured_log_entries"),
        rows_read(&all_err, "structured_log_entries"),
    );
    // The queries start the attach window (15 minutes, no contracts)
    // before --since, where the calls a repeat may pair with lie
    // (docs/design.md §7.2): here the earlier scenarios; --until still
    // cuts the later ones off.
    assert!(narrow > 0 && narrow < wide, "{narrow} of {wide} rows read");
    assert!(rows_read(&err, "tool_metrics") >= 2, "{err}");

    // A row cited by a position or key reads back as the row.
    let (j, m) = retrace::journal::load(
        vec![retrace::journal::JournalSource::database(&url)],
        None,
        &mut |_| {},
    )
    .expect("the database loads");
    for x in m.to_executions().iter().take(3) {
        for e in &x.events {
            let raw = j[0]
                .read_raw(e.source)
                .unwrap_or_else(|err| panic!("{}: {err}", e.source.place()));
            let row: serde_json::Value = serde_json::from_str(&raw).unwrap();
            assert!(row.is_object(), "{raw}");
            if e.source.table() == Some("structured_log_entries") {
                let corr = x.id.strip_prefix("contextforge:").unwrap();
                assert_eq!(row["correlation_id"], corr, "{}", e.source.place());
            }
        }
    }

    // A URL that asks for TLS is refused with a message that says so.
    let out = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(["groups", &format!("{url}?sslmode=require")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("TLS") && e.contains("not support"), "{e}");
    drop(server);
}
