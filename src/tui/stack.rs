//! The screens the app shows: a stack, the first screen at the bottom and
//! the current one on top, and the screens that keep their state while
//! they are off it ([`Opens::Kept`]: the groups table keeps its filters
//! and sort when the user goes back to the overview and returns).

use super::action::Action;
use super::screen::{Context, Opens, Screen};
use super::screens::{REGISTRY, root};
use std::any::Any;

/// A screen on the stack, or kept off it.
#[derive(Debug)]
struct Slot {
    screen: Box<dyn Screen>,
    /// The registration whose kept jump opened it.
    kept: Option<usize>,
}

/// The screens: the stack (never empty once the journals are loaded) and
/// the kept screens off it.
#[derive(Debug, Default)]
pub struct Stack {
    slots: Vec<Slot>,
    parked: Vec<Slot>,
}

impl Stack {
    /// The stack of freshly loaded journals: the first screen, and every
    /// kept screen opened and kept off the stack.
    pub fn open(cx: &Context<'_>) -> Stack {
        let slots = root(cx)
            .map(|screen| Slot { screen, kept: None })
            .into_iter()
            .collect();
        let parked = REGISTRY
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r.jump.as_ref()?.opens {
                Opens::Kept(open) => Some(Slot {
                    screen: open(cx),
                    kept: Some(i),
                }),
                _ => None,
            })
            .collect();
        Stack { slots, parked }
    }

    /// The current screen.
    pub fn top(&self) -> Option<&dyn Screen> {
        self.slots.last().map(|s| &*s.screen)
    }

    /// The current screen, to update it.
    pub fn top_mut(&mut self) -> Option<&mut Box<dyn Screen>> {
        self.slots.last_mut().map(|s| &mut s.screen)
    }

    /// The screens on the stack, the first one first.
    pub fn screens(&self) -> impl Iterator<Item = &dyn Screen> {
        self.slots.iter().map(|s| &*s.screen)
    }

    /// Every screen, on the stack and kept off it (for a new analysis).
    pub fn all(&self) -> impl Iterator<Item = &dyn Screen> {
        self.slots.iter().chain(&self.parked).map(|s| &*s.screen)
    }

    /// Every screen, on the stack and kept off it, to refresh them.
    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut Box<dyn Screen>> {
        self.slots
            .iter_mut()
            .chain(&mut self.parked)
            .map(|s| &mut s.screen)
    }

    /// The topmost screen of type `T` on the stack, else the kept one.
    pub fn find<T: Screen>(&self) -> Option<&T> {
        self.slots
            .iter()
            .rev()
            .chain(&self.parked)
            .find_map(|s| (&*s.screen as &dyn Any).downcast_ref::<T>())
    }

    /// Opens a screen on top.
    pub fn push(&mut self, screen: Box<dyn Screen>) {
        self.slots.push(Slot { screen, kept: None });
    }

    /// Goes back one screen; the first one stays.
    pub fn back(&mut self) {
        if self.slots.len() > 1 {
            self.leave(self.slots.len() - 1);
        }
    }

    /// The registration whose jump key asks for `action`, if any.
    pub fn jump_for(action: &Action) -> Option<usize> {
        REGISTRY
            .iter()
            .position(|r| r.jump.as_ref().is_some_and(|j| j.bind.action == *action))
    }

    /// Jumps to registration `i`'s screen: back to the first screen, then
    /// (unless it is the first) the screen on top of it, the kept one if
    /// it keeps its state.
    pub fn jump(&mut self, i: usize, cx: &Context<'_>) {
        self.leave(1.min(self.slots.len()));
        let Some(jump) = REGISTRY.get(i).and_then(|r| r.jump.as_ref()) else {
            return;
        };
        match jump.opens {
            Opens::Root(_) => {}
            Opens::Fresh(open) => self.push(open(cx)),
            Opens::Kept(open) => {
                let slot = match self.parked.iter().position(|s| s.kept == Some(i)) {
                    Some(p) => self.parked.remove(p),
                    None => Slot {
                        screen: open(cx),
                        kept: Some(i),
                    },
                };
                self.slots.push(slot);
            }
        }
    }

    /// Takes the screens from position `from` up off the stack, keeping
    /// those that keep their state.
    fn leave(&mut self, from: usize) {
        for slot in self.slots.drain(from..) {
            if slot.kept.is_some() {
                self.parked.retain(|p| p.kept != slot.kept);
                self.parked.push(slot);
            }
        }
    }
}
