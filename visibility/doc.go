// Package visibility decides whether a section renders in full or as its
// summary.
//
// A section's [Mode] is resolved in this order:
//
//  1. a session override for the section's dotted path (the [Overrides] slice,
//     changed by the [SetOverride], [ClearOverride] and [ClearAll] events);
//  2. the section's [Selector]: a constant ([Const]), a function of the
//     section's params ([FromParams]) or a function of session state
//     ([FromSession]).
//
// [Resolve] applies that order and says which rule decided ([Why]). Install
// the overrides slice and its reducers in a session with [Register].
package visibility
