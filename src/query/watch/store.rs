//! Where the evicted groups' index is kept (docs/design.md §7.7
//! "Memory"): in a SQLite database in a temporary file, deleted when the
//! watch ends, with a small bounded page cache, so that the memory a watch
//! holds does not grow with the executions it has seen; or, when no such
//! file can be made (a read-only temporary directory), in memory as
//! before.
//!
//! What is kept per evicted group (its slot) is [`Stored`]; what finds a
//! slot again are its key's 128-bit hash and the 64-bit hashes of its
//! executions' ids and idempotency keys (each hash may point at several
//! slots).

use super::Verdict;
use std::collections::HashMap;

/// One evicted group as the index keeps it.
pub(super) struct Stored {
    /// Its key's hash.
    pub key: u128,
    /// How many executions it has.
    pub executions: u32,
    /// Its lines, sorted, delta-coded (`evict::encode`).
    pub lines: Vec<u8>,
    /// The verdict when it was last judged.
    pub current: Option<Verdict>,
    /// The verdict last reported.
    pub reported: Option<Verdict>,
}

/// Which of the two maps from a 64-bit hash to slots.
#[derive(Clone, Copy)]
pub(super) enum Map {
    /// Hashes of execution ids.
    Execution,
    /// Hashes of idempotency keys.
    Idempotency,
}

/// The index, in memory.
#[derive(Default)]
pub(super) struct Memory {
    groups: HashMap<u32, Stored>,
    by_key: HashMap<u128, u32>,
    by_execution: HashMap<u64, Vec<u32>>,
    by_idempotency_key: HashMap<u64, Vec<u32>>,
}

impl Memory {
    fn map(&mut self, m: Map) -> &mut HashMap<u64, Vec<u32>> {
        match m {
            Map::Execution => &mut self.by_execution,
            Map::Idempotency => &mut self.by_idempotency_key,
        }
    }
}

/// The index, in a SQLite database in a temporary file.
pub(super) struct Disk {
    db: rusqlite::Connection,
    /// Deleted when dropped (after the connection: fields drop in order).
    _file: tempfile::NamedTempFile,
    /// A transaction is open (one per poll: [`Store::flush`]).
    open: bool,
    /// Pointers made so far: the slots of a hash come back in the order
    /// they were pointed at, as in memory.
    seq: i64,
}

/// Pages of the database cache: 2 MiB (a negative `cache_size` is in
/// KiB, per SQLite's documentation of the pragma).
const CACHE_KIB: i64 = 2048;

const SCHEMA: &str = "
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA temp_store = FILE;
CREATE TABLE grp (slot INTEGER PRIMARY KEY, k BLOB NOT NULL, n INTEGER NOT NULL,
                  cur INTEGER, rep INTEGER, lines BLOB NOT NULL);
CREATE TABLE by_key (k BLOB PRIMARY KEY, slot INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE by_x (h INTEGER NOT NULL, slot INTEGER NOT NULL, seq INTEGER NOT NULL,
                   PRIMARY KEY (h, slot)) WITHOUT ROWID;
CREATE TABLE by_i (h INTEGER NOT NULL, slot INTEGER NOT NULL, seq INTEGER NOT NULL,
                   PRIMARY KEY (h, slot)) WITHOUT ROWID;
";

impl Disk {
    /// Makes the database in a new temporary file in `dir`.
    fn create_in(dir: &std::path::Path) -> Result<Disk, String> {
        let file = tempfile::Builder::new()
            .prefix("retrace-watch-")
            .suffix(".sqlite")
            .tempfile_in(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        let db = rusqlite::Connection::open(file.path())
            .map_err(|e| format!("{}: {e}", file.path().display()))?;
        db.execute_batch(SCHEMA)
            .and_then(|()| db.pragma_update(None, "cache_size", -CACHE_KIB))
            .map_err(|e| format!("{}: {e}", file.path().display()))?;
        db.set_prepared_statement_cache_capacity(32);
        // Where a file open can lose its name (Unix), the name goes now: a
        // watch stopped by SIGKILL, a crash or a power cut leaves nothing
        // behind, and the space returns when the connection closes. SQLite
        // writes this database through the descriptor it holds: no journal
        // (`journal_mode = OFF`), temporary tables in files of their own.
        // Elsewhere the file is deleted when the watch ends.
        #[cfg(unix)]
        let _ = std::fs::remove_file(file.path());
        Ok(Disk {
            db,
            _file: file,
            open: false,
            seq: 0,
        })
    }

    fn begin(&mut self) -> rusqlite::Result<()> {
        if !self.open {
            self.db.execute_batch("BEGIN")?;
            self.open = true;
        }
        Ok(())
    }

    fn table(m: Map) -> &'static str {
        match m {
            Map::Execution => "by_x",
            Map::Idempotency => "by_i",
        }
    }
}

/// The index: on disk, or in memory.
pub(super) enum Store {
    /// In memory (no temporary file could be made, or none was asked).
    Memory(Memory),
    /// On disk.
    Disk(Box<Disk>),
}

impl Default for Store {
    fn default() -> Self {
        Store::Memory(Memory::default())
    }
}

/// A verdict as a small integer (its place in this list) and back.
const VERDICTS: [Verdict; 11] = [
    Verdict::DuplicateSideEffect,
    Verdict::PossibleDuplicate,
    Verdict::IdempotencyKeyConflict,
    Verdict::PendingVerification,
    Verdict::UndeliveredResult,
    Verdict::DistinctIntent,
    Verdict::Rejected,
    Verdict::DeduplicatedByTarget,
    Verdict::AttachedRetry,
    Verdict::SafeRetry,
    Verdict::Clean,
];

fn verdict_code(v: Option<Verdict>) -> Option<i64> {
    let v = v?;
    VERDICTS.iter().position(|&x| x == v).map(|i| i as i64)
}

fn verdict_of(c: Option<i64>) -> Option<Verdict> {
    VERDICTS.get(usize::try_from(c?).ok()?).copied()
}

/// SQLite integers are signed: a 64-bit hash is stored as its bits.
fn sql_hash(h: u64) -> i64 {
    h as i64
}

impl Store {
    /// The index in a temporary file in `dir`, or in memory with why not.
    pub fn on_disk_in(dir: &std::path::Path) -> (Store, Option<String>) {
        match Disk::create_in(dir) {
            Ok(d) => (Store::Disk(Box::new(d)), None),
            Err(why) => (Store::default(), Some(why)),
        }
    }

    /// Whether the index is on disk.
    pub fn on_disk(&self) -> bool {
        matches!(self, Store::Disk(_))
    }

    /// The temporary file, if the index is on disk.
    #[cfg(test)]
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Store::Disk(d) => Some(d._file.path()),
            Store::Memory(_) => None,
        }
    }

    /// How many entries the index holds in memory (groups and pointers
    /// from hashes): none when it is on disk.
    #[cfg(test)]
    pub fn in_memory(&self) -> usize {
        match self {
            Store::Memory(m) => {
                m.groups.len() + m.by_key.len() + m.by_execution.len() + m.by_idempotency_key.len()
            }
            Store::Disk(_) => 0,
        }
    }

    /// Commits what was written since the last flush (on disk: one
    /// transaction a poll).
    pub fn flush(&mut self) -> rusqlite::Result<()> {
        if let Store::Disk(d) = self
            && d.open
        {
            d.open = false;
            d.db.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// Puts a group in `slot` (free) and points its key's hash at it.
    pub fn insert(&mut self, slot: u32, g: Stored) -> rusqlite::Result<()> {
        match self {
            Store::Memory(m) => {
                m.by_key.insert(g.key, slot);
                m.groups.insert(slot, g);
            }
            Store::Disk(d) => {
                d.begin()?;
                d.db.prepare_cached(
                    "INSERT OR REPLACE INTO grp (slot, k, n, cur, rep, lines) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?
                .execute(rusqlite::params![
                    slot,
                    g.key.to_le_bytes(),
                    g.executions,
                    verdict_code(g.current),
                    verdict_code(g.reported),
                    g.lines
                ])?;
                d.db.prepare_cached("INSERT OR REPLACE INTO by_key (k, slot) VALUES (?1, ?2)")?
                    .execute(rusqlite::params![g.key.to_le_bytes(), slot])?;
            }
        }
        Ok(())
    }

    /// Takes a slot's group out, and its key's pointer (its pointers from
    /// the other hashes are left to [`Store::sweep`] or
    /// [`Store::unpoint`]).
    pub fn take(&mut self, slot: u32) -> rusqlite::Result<Option<Stored>> {
        match self {
            Store::Memory(m) => {
                let g = m.groups.remove(&slot);
                if let Some(g) = &g {
                    m.by_key.remove(&g.key);
                }
                Ok(g)
            }
            Store::Disk(d) => {
                let Some((k, n, cur, rep, lines)) =
                    d.db.prepare_cached("SELECT k, n, cur, rep, lines FROM grp WHERE slot = ?1")?
                        .query_map([slot], |r| {
                            Ok((
                                r.get::<_, Vec<u8>>(0)?,
                                r.get::<_, u32>(1)?,
                                r.get::<_, Option<i64>>(2)?,
                                r.get::<_, Option<i64>>(3)?,
                                r.get::<_, Vec<u8>>(4)?,
                            ))
                        })?
                        .next()
                        .transpose()?
                else {
                    return Ok(None);
                };
                d.begin()?;
                d.db.prepare_cached("DELETE FROM grp WHERE slot = ?1")?
                    .execute([slot])?;
                // As in memory, the key's pointer goes with the group.
                d.db.prepare_cached("DELETE FROM by_key WHERE k = ?1")?
                    .execute([&k])?;
                let key = <[u8; 16]>::try_from(k.as_slice()).map_or(0, u128::from_le_bytes);
                Ok(Some(Stored {
                    key,
                    executions: n,
                    lines,
                    current: verdict_of(cur),
                    reported: verdict_of(rep),
                }))
            }
        }
    }

    /// The slot a key's hash points at.
    pub fn slot_of_key(&mut self, key: u128) -> rusqlite::Result<Option<u32>> {
        match self {
            Store::Memory(m) => Ok(m.by_key.get(&key).copied()),
            Store::Disk(d) => {
                d.db.prepare_cached("SELECT slot FROM by_key WHERE k = ?1")?
                    .query_map([key.to_le_bytes()], |r| r.get::<_, u32>(0))?
                    .next()
                    .transpose()
            }
        }
    }

    /// Points a hash at a slot too.
    pub fn point(&mut self, m: Map, h: u64, slot: u32) -> rusqlite::Result<()> {
        match self {
            Store::Memory(mem) => {
                let v = mem.map(m).entry(h).or_default();
                if !v.contains(&slot) {
                    v.push(slot);
                }
            }
            Store::Disk(d) => {
                d.begin()?;
                d.seq += 1;
                let sql = format!(
                    "INSERT OR IGNORE INTO {} (h, slot, seq) VALUES (?1, ?2, ?3)",
                    Disk::table(m)
                );
                d.db.prepare_cached(&sql)?
                    .execute(rusqlite::params![sql_hash(h), slot, d.seq])?;
            }
        }
        Ok(())
    }

    /// The slots a hash points at, in the order they were pointed at.
    pub fn slots(&mut self, m: Map, h: u64) -> rusqlite::Result<Vec<u32>> {
        match self {
            Store::Memory(mem) => Ok(mem.map(m).get(&h).cloned().unwrap_or_default()),
            Store::Disk(d) => {
                let sql = format!(
                    "SELECT slot FROM {} WHERE h = ?1 ORDER BY seq",
                    Disk::table(m)
                );
                d.db.prepare_cached(&sql)?
                    .query_map([sql_hash(h)], |r| r.get::<_, u32>(0))?
                    .collect()
            }
        }
    }

    /// No longer points a hash at a slot.
    pub fn unpoint(&mut self, m: Map, h: u64, slot: u32) -> rusqlite::Result<()> {
        match self {
            Store::Memory(mem) => {
                let map = mem.map(m);
                if let Some(v) = map.get_mut(&h) {
                    v.retain(|&s| s != slot);
                    if v.is_empty() {
                        map.remove(&h);
                    }
                }
            }
            Store::Disk(d) => {
                d.begin()?;
                let sql = format!("DELETE FROM {} WHERE h = ?1 AND slot = ?2", Disk::table(m));
                d.db.prepare_cached(&sql)?
                    .execute(rusqlite::params![sql_hash(h), slot])?;
            }
        }
        Ok(())
    }

    /// Drops every pointer from a hash to a slot that holds no group.
    pub fn sweep(&mut self) -> rusqlite::Result<()> {
        match self {
            Store::Memory(mem) => {
                let groups = &mem.groups;
                for map in [&mut mem.by_execution, &mut mem.by_idempotency_key] {
                    map.retain(|_, v| {
                        v.retain(|s| groups.contains_key(s));
                        !v.is_empty()
                    });
                }
            }
            Store::Disk(d) => {
                d.begin()?;
                d.db.execute_batch(
                    "DELETE FROM by_x WHERE slot NOT IN (SELECT slot FROM grp);
                     DELETE FROM by_i WHERE slot NOT IN (SELECT slot FROM grp);",
                )?;
            }
        }
        Ok(())
    }

    /// The groups `change` gives other lines for (given each group's
    /// slot and lines: `Some` of its lines now), with those lines; the
    /// index is not changed.
    pub fn changed_lines(
        &mut self,
        mut change: impl FnMut(&[u8]) -> Option<Vec<u8>>,
    ) -> rusqlite::Result<Vec<(u32, Vec<u8>)>> {
        let mut out = Vec::new();
        match self {
            Store::Memory(mem) => {
                let mut slots: Vec<u32> = mem.groups.keys().copied().collect();
                slots.sort_unstable();
                for s in slots {
                    if let Some(l) = mem.groups.get(&s).and_then(|g| change(&g.lines)) {
                        out.push((s, l));
                    }
                }
            }
            Store::Disk(d) => {
                let mut st =
                    d.db.prepare_cached("SELECT slot, lines FROM grp ORDER BY slot")?;
                let mut rows = st.query([])?;
                while let Some(r) = rows.next()? {
                    let s: u32 = r.get(0)?;
                    let lines: Vec<u8> = r.get(1)?;
                    if let Some(l) = change(&lines) {
                        out.push((s, l));
                    }
                }
            }
        }
        Ok(out)
    }

    /// Gives a group other lines.
    pub fn set_lines(&mut self, slot: u32, lines: Vec<u8>) -> rusqlite::Result<()> {
        match self {
            Store::Memory(mem) => {
                if let Some(g) = mem.groups.get_mut(&slot) {
                    g.lines = lines;
                }
            }
            Store::Disk(d) => {
                d.begin()?;
                d.db.prepare_cached("UPDATE grp SET lines = ?2 WHERE slot = ?1")?
                    .execute(rusqlite::params![slot, lines])?;
            }
        }
        Ok(())
    }
}
