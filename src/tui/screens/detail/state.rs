//! The group detail's state (which pane has the keys, the selections, the
//! group as the query layer describes it) and the areas it is drawn in,
//! shared by the panes.

use crate::query::{EvidenceView, GroupDetail, GroupIdx};
use crate::tui::data::Data;
use crate::tui::theme::Theme;
use crate::tui::widgets::Cursor;
use crate::tui::widgets::lanes::Axis;
use crate::tui::widgets::stages::records;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::widgets::Block;

/// Which pane has the keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Focus {
    /// The executions.
    #[default]
    Lanes,
    /// The five questions and their evidence.
    Evidence,
}

/// The group detail screen's state.
#[derive(Debug, Clone)]
pub struct Detail {
    /// The group.
    pub group: GroupIdx,
    /// Everything the query layer says about it.
    pub detail: GroupDetail,
    /// Focused pane.
    pub focus: Focus,
    /// Selected execution.
    pub lanes: Cursor,
    /// Every piece of evidence, answers first, then findings.
    pub evidence: Vec<EvidenceView>,
    /// Selected item of the questions pane: a piece of evidence, then the
    /// near duplicates (`detail.near_duplicates`) after the last one
    /// ([`Detail::items`]).
    pub ev: Cursor,
    /// First line shown in the questions pane.
    pub qscroll: usize,
    /// The time axis shared by the lanes.
    pub axis: Option<Axis>,
    /// Whether the journals record authorization and delivery (a missing
    /// stage is a gap only where it could have been recorded).
    pub records: (bool, bool),
}

impl Detail {
    /// Opens group `g`; `None` when there is no such group.
    pub fn new(data: &Data, g: GroupIdx) -> Option<Detail> {
        let detail = data.inv.group_at(g)?.detail();
        let evidence = detail
            .questions
            .iter()
            .flat_map(|a| a.evidence.iter().cloned())
            .chain(
                detail
                    .findings
                    .iter()
                    .flat_map(|f| f.evidence.iter().cloned()),
            )
            .collect();
        let axis = Axis::of(&detail.executions_detail);
        Some(Detail {
            axis,
            records: records(data),
            group: g,
            detail,
            focus: Focus::Lanes,
            lanes: Cursor::default(),
            evidence,
            ev: Cursor::default(),
            qscroll: 0,
        })
    }

    /// How many items the questions pane selects from: every piece of
    /// evidence, then every near duplicate (docs/design.md §5.13).
    pub fn items(&self) -> usize {
        self.evidence.len() + self.detail.near_duplicates.len()
    }

    /// The near duplicate selected, when the selection is past the evidence.
    pub fn selected_near(&self) -> Option<&crate::query::NearDuplicateView> {
        let i = self.ev.selected.checked_sub(self.evidence.len())?;
        self.detail.near_duplicates.get(i)
    }

    /// Takes the content of `new` (the same group after a new analysis)
    /// and keeps the focus, selections and scroll.
    pub(super) fn keep_place(&mut self, new: Detail) {
        let (focus, lanes, ev, qscroll) = (self.focus, self.lanes, self.ev, self.qscroll);
        *self = new;
        self.focus = focus;
        self.lanes = lanes;
        self.lanes
            .select(lanes.selected, self.detail.executions_detail.len());
        self.ev = ev;
        self.ev.select(ev.selected, self.items());
        self.qscroll = qscroll;
    }
}

/// Areas of the screen: header, executions, questions.
pub struct Areas {
    /// Verdict and reason.
    pub header: Rect,
    /// Executions.
    pub lanes: Rect,
    /// The five questions.
    pub questions: Rect,
}

/// The inside of a bordered pane.
pub(super) fn inner(r: Rect) -> Rect {
    Block::bordered().inner(r)
}

/// A pane's border: accented when it has the keys.
pub(super) fn focus_style(theme: &Theme, focused: bool) -> Style {
    if focused { theme.accent } else { theme.muted }
}
