//! What following journals needs from analysis (docs/design.md §7.7): the
//! group key of executions without judging them, so that a new event is
//! judged with only the executions of its own group; judging those is
//! [`super::analyze`] over a model of just them, since a verdict depends
//! only on the executions of its group.

use super::{Config, GroupKey, ToolContract, hinted_contracts, intents};
use crate::model::Model;

/// The group key (docs/design.md §1) of every execution of `model`, aligned
/// with [`Model::executions`]: the same key [`super::analyze`] groups it by,
/// or an orphan key (`orphan:<execution id>`) for an execution with no
/// accepted record yet.
pub fn group_keys(model: &Model, config: &Config) -> Vec<GroupKey> {
    let unconfigured = ToolContract::unconfigured();
    let hinted = hinted_contracts(model, config);
    intents(model, config, (&hinted, &unconfigured), 0)
        .into_iter()
        .zip(model.executions())
        .map(|(i, x)| match i {
            Some(i) => i.key(),
            None => GroupKey::orphan(x),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::load;

    /// The keys are the ones the whole analysis groups by.
    #[test]
    fn keys_match_the_groups_of_the_analysis() {
        let (_, model) = load(crate::sample::sources(), None, &mut |_| {}).unwrap();
        let config = crate::sample::config();
        let a = super::super::analyze(&model, &Caps, &config);
        let keys = group_keys(&model, &config);
        for (x, k) in keys.iter().enumerate() {
            let g = &a.groups[a.execution_group[x].get()];
            assert_eq!(g.id, k.id());
        }
    }

    struct Caps;
    impl crate::analysis::JournalCaps for Caps {
        fn caps(&self, _: crate::model::JournalId) -> crate::journal::Capabilities {
            crate::journal::Format::Native.capabilities()
        }
        fn name(&self, _: crate::model::JournalId) -> &str {
            "journal"
        }
    }
}
