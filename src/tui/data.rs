//! The loaded journals and the views the screens keep over them ([`Data`]),
//! and how loading stands ([`Load`]). Shared by the app, the screens and
//! the background jobs; it knows no screen.

use super::search::SearchIndex;
use crate::query::{
    CallRate, ExecIdx, GroupFilter, GroupIdx, Investigation, Progress, QueryError, QueueItem,
    Reanalysis, Verdict,
};
use std::sync::Arc;

/// Buckets of the call-rate series kept for the overview sparkline; the
/// sparkline folds them to its width.
pub const RATE_BUCKETS: usize = 1024;

/// Loaded journals with the views the screens keep over them. Built once,
/// on the loader thread.
#[derive(Debug)]
pub struct Data {
    /// The investigation (read only through the query layer).
    pub inv: Investigation,
    /// What the fuzzy filter searches.
    pub search: SearchIndex,
    /// Tool names, most groups first, for the tool filter.
    pub tools: Vec<String>,
    /// Groups worth a look, worst first.
    pub worst: Vec<GroupIdx>,
    /// Calls over time.
    pub rate: CallRate,
    /// Per session, its executions.
    pub session_execs: Vec<Vec<ExecIdx>>,
    /// Groups per verdict, most severe first.
    pub verdict_counts: Vec<(Verdict, usize)>,
    /// The review queue, oldest first.
    pub queue: Vec<QueueItem>,
}

impl Data {
    /// Prepares what the screens need once.
    pub fn new(inv: Investigation) -> Data {
        let mut d = Data::views(inv);
        d.queue = d.inv.review_queue();
        d
    }

    /// Takes a new analysis of the same journals (after a decision): the
    /// verdict-dependent views are rebuilt, the search index is reordered
    /// to the new group order ([`Reanalysis::order`]), and the review
    /// queue is asked again.
    pub fn reanalysed(&mut self, r: Reanalysis) {
        let n_old = self.search.len();
        let order: Option<Vec<GroupIdx>> = r.order.iter().copied().collect();
        let old = self.inv.apply(r);
        // Freeing a large analysis (an allocation per group, lifecycle and
        // finding) took a quarter of a second on a million events: not
        // the UI thread's work.
        std::thread::spawn(move || drop(old));
        let n = self.inv.group_count();
        match order {
            Some(order) if order.len() == n && n == n_old => self.search.reorder(&order),
            _ => self.search = SearchIndex::build(&self.inv, n),
        }
        self.worst = self.inv.group_indices(&GroupFilter::default());
        self.verdict_counts = self.inv.verdict_counts();
        self.queue = self.inv.review_queue();
    }

    fn views(inv: Investigation) -> Data {
        let search = SearchIndex::build(&inv, inv.group_count());
        let mut counts: std::collections::HashMap<&str, usize> = Default::default();
        for g in inv.all_groups() {
            *counts.entry(g.tool()).or_default() += 1;
        }
        let mut tools: Vec<(&str, usize)> = counts.into_iter().collect();
        tools.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let tools = tools.into_iter().map(|(t, _)| t.to_string()).collect();
        let worst = inv.group_indices(&GroupFilter::default());
        let rate = inv.call_rate(RATE_BUCKETS);
        let session_execs = inv.session_executions();
        let verdict_counts = inv.verdict_counts();
        Data {
            verdict_counts,
            inv,
            search,
            tools,
            worst,
            rate,
            session_execs,
            queue: Vec::new(),
        }
    }
}

/// How far loading has come.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadProgress {
    /// Names of the journals being loaded.
    pub journals: Vec<String>,
    /// The latest progress report, if any.
    pub progress: Option<Progress>,
    /// Reading is done; the analysis runs.
    pub analysing: bool,
}

/// Loading, failed, or ready.
#[derive(Debug)]
pub enum Load {
    /// Journals are being read.
    Loading(LoadProgress),
    /// Loading failed (the error names file and line).
    Failed(QueryError),
    /// Ready. Shared with a background job (recording a decision,
    /// writing an export) while one runs; only the UI thread changes it,
    /// once the job has let go.
    Ready(Arc<Data>),
}

/// What the background loader reports.
#[derive(Debug)]
pub enum LoadMsg {
    /// Bytes read so far.
    Progress(Progress),
    /// Reading is done; analysis runs.
    Analysing,
    /// The result.
    Done(Result<Box<Data>, QueryError>),
}
