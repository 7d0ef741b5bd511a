//! Follow mode (`F`, docs/design.md §7.7 "Follow mode"): a thread follows
//! the loaded journals through the query layer's [`Follow`], and reports
//! over the same channel as loading and the jobs: what each poll found
//! (events per second, the newest event, bad lines), and a new [`Data`]
//! when the journals gained events. The UI thread only applies what it is
//! sent ([`super::App::on_follow`]); it never reads a journal.

use super::data::Data;
use crate::query::{Follow, FollowPoll, Setup};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the journals are polled.
pub const POLL: Duration = Duration::from_millis(250);

/// What the UI thread tells a follow thread.
#[derive(Debug, Default)]
pub struct Control {
    /// Stop following (the thread ends at its next poll).
    pub stop: AtomicBool,
    /// Open the investigation again at the next poll, even if the
    /// journals did not change (a decision changed the case file).
    pub refresh: AtomicBool,
}

/// What a follow thread reports; `generation` tells a stopped follow's
/// late messages from those of the one running now.
#[derive(Debug)]
pub struct FollowMsg {
    /// Which start of follow mode sent it.
    pub generation: u64,
    /// What.
    pub kind: FollowKind,
}

/// What a follow thread found.
#[derive(Debug)]
pub enum FollowKind {
    /// The journals as they were are read: following has begun.
    Started,
    /// A poll.
    Poll(Box<FollowPoll>),
    /// The investigation opened again with what the journals gained.
    Data(Box<Data>),
    /// The journals could not be opened again (tried again at the next
    /// poll), in words.
    Trouble(String),
    /// Following could not begin (the journals are not plain files), in
    /// words; the thread has ended.
    Failed(String),
}

/// Follows `setup`'s journals on a thread until `control.stop` is set;
/// every report goes to `send`.
pub fn spawn(
    setup: Setup,
    generation: u64,
    control: Arc<Control>,
    send: impl Fn(FollowMsg) + Send + 'static,
) {
    std::thread::spawn(move || {
        let say = |kind| {
            send(FollowMsg { generation, kind });
        };
        let mut follow = match Follow::start(&setup) {
            Ok(f) => f,
            Err(e) => return say(FollowKind::Failed(e.to_string())),
        };
        say(FollowKind::Started);
        while !control.stop.load(Ordering::Relaxed) {
            if control.refresh.swap(false, Ordering::Relaxed) {
                follow.refresh_soon();
            }
            say(FollowKind::Poll(Box::new(follow.poll())));
            if follow.due() {
                match follow.investigation() {
                    Ok(inv) => say(FollowKind::Data(Box::new(Data::new(inv)))),
                    Err(e) => say(FollowKind::Trouble(e.to_string())),
                }
            }
            std::thread::sleep(POLL);
        }
    });
}
