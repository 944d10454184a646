//! What a front end found around the mutants: arid code and fast-path guards, put on each mutant as its `arid` and `likely_equivalent` marks.

use std::ops::Range;

use crate::catalog::{Marker, Mutator, EQUIVALENT};
use crate::Mutant;

/// The places of one file that mark the mutants made there.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    /// Byte ranges of arid code, each with its rule.
    pub arid: Vec<(Range<usize>, &'static Marker)>,
    /// Byte ranges of the conditions of fast-path guards.
    pub fast_paths: Vec<Range<usize>>,
    /// Byte ranges of the `return` statements fast-path guards hold: deleting one is forcing
    /// its guard to false.
    pub fast_path_returns: Vec<Range<usize>>,
}

impl Marks {
    pub(crate) fn arid(&mut self, span: Range<usize>, rule: &'static Marker) {
        self.arid.push((span, rule));
    }

    /// Marks every mutant: arid when its whole edit lies inside arid code; likely equivalent
    /// when it forces a fast-path guard's condition to false or deletes its `return`.
    pub(crate) fn apply(&self, mutants: &mut [Mutant]) {
        for mutant in mutants {
            let span = &mutant.span;
            let inside = |range: &Range<usize>| range.start <= span.start && span.end <= range.end;
            mutant.arid = self.arid.iter().find(|(range, _)| inside(range)).map(|(_, rule)| *rule);
            let forced_false = mutant.mutator() == Mutator::ConditionForcing
                && matches!(mutant.replacement.trim(), "False" | "false");
            let return_deleted =
                mutant.mutator() == Mutator::StatementDeletion && self.fast_path_returns.contains(span);
            if (forced_false && self.fast_paths.contains(span)) || return_deleted {
                mutant.likely_equivalent = Some(named(EQUIVALENT, "fast-path-guard"));
            }
        }
    }
}

/// The marker of `markers` called `name`.
pub(crate) fn named(markers: &'static [Marker], name: &str) -> &'static Marker {
    markers.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no marker named {name}"))
}
