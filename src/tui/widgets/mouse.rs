//! The mouse as the screens take it: a click or a turn of the wheel at a
//! cell of the terminal ([`Pointer::of`]), the list row under it
//! ([`row_at`]), and what a click does to a list's cursor ([`click`]).
//! Screens find the row from the same layout they draw, so a click lands
//! on the row the user sees.

use super::Cursor;
use crate::tui::action::Action;
use ratatui::layout::{Position, Rect};

/// Lines a text pane scrolls per notch of the wheel (what terminals and
/// most pagers use).
pub const WHEEL_LINES: usize = 3;

/// What the mouse did, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pointer {
    /// The left button pressed at this cell.
    Click(Position),
    /// The wheel turned down (towards the user) over this cell.
    WheelDown(Position),
    /// The wheel turned up over this cell.
    WheelUp(Position),
}

impl Pointer {
    /// The mouse action `action` is, if it is one.
    pub fn of(action: &Action) -> Option<Pointer> {
        Some(match *action {
            Action::Click(x, y) => Pointer::Click(Position::new(x, y)),
            Action::WheelDown(x, y) => Pointer::WheelDown(Position::new(x, y)),
            Action::WheelUp(x, y) => Pointer::WheelUp(Position::new(x, y)),
            _ => return None,
        })
    }

    /// Where it happened.
    pub fn at(self) -> Position {
        match self {
            Pointer::Click(p) | Pointer::WheelDown(p) | Pointer::WheelUp(p) => p,
        }
    }

    /// Whether it happened inside `area`.
    pub fn within(self, area: Rect) -> bool {
        area.contains(self.at())
    }

    /// The wheel's direction: +1 down, -1 up, 0 for a click.
    pub fn wheel(self) -> isize {
        match self {
            Pointer::Click(_) => 0,
            Pointer::WheelDown(_) => 1,
            Pointer::WheelUp(_) => -1,
        }
    }
}

/// The item under `at` of a list whose rows are drawn one per line in
/// `rows` (the area below borders and header), the first one being item
/// `first` of `len`.
pub fn row_at(rows: Rect, first: usize, len: usize, at: Position) -> Option<usize> {
    if !rows.contains(at) {
        return None;
    }
    let i = first + usize::from(at.y - rows.y);
    (i < len).then_some(i)
}

/// A click on item `i` of a list: selects it, or, when it was selected
/// already, answers true (the caller opens it, as Enter would).
pub fn click(cursor: &mut Cursor, i: usize, len: usize) -> bool {
    if cursor.selected == i {
        return true;
    }
    cursor.select(i, len);
    false
}

/// What the mouse did to a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// Nothing: it happened elsewhere.
    Miss,
    /// The selection moved (a click on another row, or the wheel).
    Moved,
    /// A click on the row that was selected: open it, as Enter would.
    Open,
}

/// The mouse over a list drawn in `pane` (borders included) whose rows
/// are drawn one per line in `rows`, [`Cursor::window`] deciding which: a
/// click on a row selects it (or opens it, [`click`]); the wheel anywhere
/// over the pane moves the selection a row.
pub fn on_list(cursor: &mut Cursor, pane: Rect, rows: Rect, len: usize, p: Pointer) -> Hit {
    if !p.within(pane) {
        return Hit::Miss;
    }
    match p {
        Pointer::Click(at) => {
            let first = cursor.offset_for(usize::from(rows.height), len);
            match row_at(rows, first, len, at) {
                Some(i) if click(cursor, i, len) => Hit::Open,
                Some(_) => Hit::Moved,
                None => Hit::Miss,
            }
        }
        _ => {
            cursor.step(p.wheel(), len);
            Hit::Moved
        }
    }
}

/// The rows of a bordered table with a one-line header drawn in `pane`.
pub fn table_rows(pane: Rect) -> Rect {
    Rect::new(
        pane.x.saturating_add(1),
        pane.y.saturating_add(2),
        pane.width.saturating_sub(2),
        pane.height.saturating_sub(3),
    )
}

/// The inside of a bordered pane.
pub fn inside(pane: Rect) -> Rect {
    Rect::new(
        pane.x.saturating_add(1),
        pane.y.saturating_add(1),
        pane.width.saturating_sub(2),
        pane.height.saturating_sub(2),
    )
}

/// Scrolls a text pane's first line by the wheel (`dir` +1 down, -1 up,
/// 0 not at all), [`WHEEL_LINES`] at a time, up to `max`.
pub fn wheel_scroll(offset: &mut usize, dir: isize, max: usize) {
    *offset = match dir.signum() {
        -1 => offset.saturating_sub(WHEEL_LINES),
        1 => offset.saturating_add(WHEEL_LINES).min(max),
        _ => *offset,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_under_the_pointer() {
        let rows = Rect::new(2, 5, 20, 4);
        assert_eq!(row_at(rows, 10, 100, Position::new(3, 5)), Some(10));
        assert_eq!(row_at(rows, 10, 100, Position::new(3, 8)), Some(13));
        assert_eq!(row_at(rows, 10, 100, Position::new(3, 9)), None, "below");
        assert_eq!(row_at(rows, 10, 100, Position::new(1, 6)), None, "left");
        assert_eq!(
            row_at(rows, 0, 2, Position::new(3, 7)),
            None,
            "past the end"
        );
        let mut c = Cursor::default();
        assert!(!click(&mut c, 3, 10));
        assert_eq!(c.selected, 3);
        assert!(click(&mut c, 3, 10), "a second click opens");
        let mut off = 1;
        wheel_scroll(&mut off, -1, 50);
        assert_eq!(off, 0);
        wheel_scroll(&mut off, 1, 50);
        assert_eq!(off, 3);
        wheel_scroll(&mut off, 1, 4);
        assert_eq!(off, 4);
        wheel_scroll(&mut off, 0, 50);
        assert_eq!(off, 4, "a click scrolls nothing");
        assert_eq!(
            Pointer::of(&Action::WheelUp(1, 2)).map(Pointer::wheel),
            Some(-1)
        );
        assert_eq!(Pointer::of(&Action::Down), None);
    }
}
