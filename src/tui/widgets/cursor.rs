//! A selection in a long list and the first row on screen, and the one
//! place the movement actions (up, down, page up, page down, first, last)
//! become cursor moves ([`Move`], [`Cursor::apply`]) or scroll moves
//! ([`scroll`]). Only the rows in the window are ever built, so a list of
//! a million rows costs what the screen shows.

use crate::tui::action::Action;

/// A movement the keys ask for, as a list cursor or a scrolled pane takes
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// One row up.
    Up,
    /// One row down.
    Down,
    /// One page up.
    PageUp,
    /// One page down.
    PageDown,
    /// The first row.
    Top,
    /// The last row.
    Bottom,
}

impl Move {
    /// Every movement.
    pub const ALL: [Move; 6] = [
        Move::Up,
        Move::Down,
        Move::PageUp,
        Move::PageDown,
        Move::Top,
        Move::Bottom,
    ];

    /// The movement `action` asks for, if it is one of [`Action::Up`],
    /// [`Action::Down`], [`Action::PageUp`], [`Action::PageDown`],
    /// [`Action::Top`] and [`Action::Bottom`].
    pub fn of(action: &Action) -> Option<Move> {
        Some(match action {
            Action::Up => Move::Up,
            Action::Down => Move::Down,
            Action::PageUp => Move::PageUp,
            Action::PageDown => Move::PageDown,
            Action::Top => Move::Top,
            Action::Bottom => Move::Bottom,
            _ => return None,
        })
    }
}

/// Moves a scroll offset (the first line shown of a text pane): one line,
/// a page of `page` lines, to the top (0) or to `max` (the caller clamps
/// the offset to its text afterwards; `usize::MAX` is fine).
pub fn scroll(offset: &mut usize, m: Move, page: usize, max: usize) {
    *offset = match m {
        Move::Up => offset.saturating_sub(1),
        Move::Down => offset.saturating_add(1),
        Move::PageUp => offset.saturating_sub(page),
        Move::PageDown => offset.saturating_add(page),
        Move::Top => 0,
        Move::Bottom => max,
    };
}

/// A selected row and a scroll offset over a list of `len` rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Selected row (0-based).
    pub selected: usize,
    /// First row shown, as last settled; [`Cursor::offset_for`] corrects it.
    pub offset: usize,
}

impl Cursor {
    /// The first row to show in a window of `height` rows so that the
    /// selection is visible, moving as little as possible from the stored
    /// offset. Pure: drawing calls it without changing the cursor.
    pub fn offset_for(&self, height: usize, len: usize) -> usize {
        if height == 0 || len == 0 {
            return 0;
        }
        let sel = self.selected.min(len - 1);
        let mut off = self.offset.min(len.saturating_sub(height));
        if sel < off {
            off = sel;
        } else if sel >= off + height {
            off = sel + 1 - height;
        }
        off
    }

    /// The window of rows to build: `offset..offset + visible`.
    pub fn window(&self, height: usize, len: usize) -> std::ops::Range<usize> {
        let off = self.offset_for(height, len);
        off..(off + height).min(len)
    }

    /// Moves the selection by `delta` rows, clamped to the list.
    pub fn step(&mut self, delta: isize, len: usize) {
        if len == 0 {
            self.selected = 0;
            return;
        }
        let cur = self.selected.min(len - 1) as isize;
        self.selected = (cur + delta).clamp(0, len as isize - 1) as usize;
    }

    /// Selects row `i`, clamped.
    pub fn select(&mut self, i: usize, len: usize) {
        self.selected = i.min(len.saturating_sub(1));
    }

    /// Applies a movement over a list of `len` rows whose pages hold
    /// `page` rows (taken as at least one): the selection stays inside the
    /// list, and stops at its ends.
    pub fn apply(&mut self, m: Move, len: usize, page: usize) {
        let page = isize::try_from(page.max(1)).unwrap_or(isize::MAX);
        match m {
            Move::Up => self.step(-1, len),
            Move::Down => self.step(1, len),
            Move::PageUp => self.step(-page, len),
            Move::PageDown => self.step(page, len),
            Move::Top => self.select(0, len),
            Move::Bottom => self.select(len.saturating_sub(1), len),
        }
    }

    /// As [`Cursor::apply`] for a short menu whose ends meet: up from the
    /// first row selects the last, down from the last the first.
    pub fn cycle(&mut self, m: Move, len: usize) {
        if len == 0 {
            self.selected = 0;
            return;
        }
        let cur = self.selected.min(len - 1);
        match m {
            Move::Up => self.selected = (cur + len - 1) % len,
            Move::Down => self.selected = (cur + 1) % len,
            _ => self.apply(m, len, len),
        }
    }

    /// Stores the offset a window of `height` rows would use.
    pub fn settle(&mut self, height: usize, len: usize) {
        self.offset = self.offset_for(height, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_follows_selection_with_least_movement() {
        let mut c = Cursor::default();
        assert_eq!(c.window(5, 100), 0..5);
        c.step(7, 100);
        c.settle(5, 100);
        assert_eq!(c.window(5, 100), 3..8);
        c.step(-1, 100);
        assert_eq!(c.window(5, 100), 3..8, "moving inside the window keeps it");
        c.step(-10, 100);
        assert_eq!(c.selected, 0);
        assert_eq!(c.window(5, 100), 0..5);
        c.select(1_000, 100);
        assert_eq!(c.selected, 99);
        assert_eq!(c.window(5, 100), 95..100);
    }

    #[test]
    fn every_movement_action_moves_the_cursor_and_stays_inside() {
        let actions = [
            Action::Up,
            Action::Down,
            Action::PageUp,
            Action::PageDown,
            Action::Top,
            Action::Bottom,
        ];
        assert_eq!(actions.map(|a| Move::of(&a).unwrap()), Move::ALL);
        assert_eq!(Move::of(&Action::Open), None);
        assert_eq!(Move::of(&Action::ScrollDown), None);
        let mut c = Cursor::default();
        c.apply(Move::Down, 100, 10);
        assert_eq!(c.selected, 1);
        c.apply(Move::PageDown, 100, 10);
        assert_eq!(c.selected, 11);
        c.apply(Move::PageUp, 100, 10);
        assert_eq!(c.selected, 1);
        c.apply(Move::PageUp, 100, 10);
        assert_eq!(c.selected, 0, "a page up near the top stops at the top");
        c.apply(Move::Up, 100, 10);
        assert_eq!(c.selected, 0);
        c.apply(Move::Bottom, 100, 10);
        assert_eq!(c.selected, 99);
        c.apply(Move::Down, 100, 10);
        assert_eq!(c.selected, 99, "down at the bottom stays");
        c.apply(Move::PageDown, 100, 0);
        assert_eq!(c.selected, 99, "a page is at least a row");
        c.apply(Move::Top, 100, 10);
        assert_eq!(c.selected, 0);
        // A list that shrank: the selection comes back inside.
        c.select(99, 100);
        c.apply(Move::Up, 10, 3);
        assert_eq!(c.selected, 8);
        // Every movement on an empty list selects row 0.
        for m in Move::ALL {
            let mut c = Cursor {
                selected: 5,
                offset: 2,
            };
            c.apply(m, 0, 4);
            assert_eq!(c.selected, 0, "{m:?}");
        }
    }

    #[test]
    fn a_menu_cycles_and_a_pane_scrolls() {
        let mut c = Cursor::default();
        c.cycle(Move::Up, 3);
        assert_eq!(c.selected, 2);
        c.cycle(Move::Down, 3);
        assert_eq!(c.selected, 0);
        c.cycle(Move::Bottom, 3);
        assert_eq!(c.selected, 2);
        let mut off = 0;
        scroll(&mut off, Move::Up, 5, 40);
        assert_eq!(off, 0);
        scroll(&mut off, Move::PageDown, 5, 40);
        assert_eq!(off, 5);
        scroll(&mut off, Move::Down, 5, 40);
        assert_eq!(off, 6);
        scroll(&mut off, Move::PageUp, 5, 40);
        assert_eq!(off, 1);
        scroll(&mut off, Move::Bottom, 5, 40);
        assert_eq!(off, 40);
        scroll(&mut off, Move::Top, 5, 40);
        assert_eq!(off, 0);
        let mut off = usize::MAX;
        scroll(&mut off, Move::Down, 5, 40);
        assert_eq!(off, usize::MAX, "no overflow");
    }

    #[test]
    fn empty_and_zero_height() {
        let mut c = Cursor::default();
        c.step(3, 0);
        assert_eq!(c.window(0, 10), 0..0);
        assert_eq!(c.window(10, 0), 0..0);
        assert_eq!(c.window(10, 3), 0..3);
    }
}
