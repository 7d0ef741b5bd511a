//! A selection in a long list and the first row on screen. Only the rows in
//! the window are ever built, so a list of a million rows costs what the
//! screen shows.

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
    fn empty_and_zero_height() {
        let mut c = Cursor::default();
        c.step(3, 0);
        assert_eq!(c.window(0, 10), 0..0);
        assert_eq!(c.window(10, 0), 0..0);
        assert_eq!(c.window(10, 3), 0..3);
    }
}
