// Package session is an event-sourced store for the state that shapes a prompt.
//
// A Session holds typed state slices. Each slice is declared once with a name and
// an initial value ([NewSlice]) and registered in a session ([Register]). State
// changes only through events: [Session.Dispatch] appends an event to an ordered
// log (sequence number and time) and runs every reducer registered for that event
// type, in registration order. A reducer is a pure function from the old value of
// its slice and the event to the new value ([On], [OnErr]).
//
// # Guarantees
//
//   - A reducer that panics or returns an error leaves its slice unchanged; the
//     other reducers for the same event still apply, and Dispatch returns the
//     failure. The event is logged either way, as are events no reducer handles.
//   - Values read with [Get] are never changed by a later dispatch: the session
//     replaces a slice's value and never mutates it. Reducers must return new
//     values instead of mutating the old one (copy maps and slices on write).
//   - A Session is safe for concurrent use. Dispatches are serialized; reads see
//     the state after some whole dispatch, never half of one.
//
// # Events before their reducers
//
// No event is lost for want of a reducer. An event that no reducer handles
// when it is dispatched (a visibility override set before the prompt that
// installs the overrides slice first renders, say) is logged, and Dispatch
// returns nil. When a reducer for its type is registered later ([On],
// [OnErr]), the session rebuilds that reducer's slice by running all of the
// slice's reducers over the events logged since the slice's initial value,
// in log order: the state is then what replaying the log into a session
// with the same reducers gives, whenever each reducer was registered. A
// reducer's failures while catching up are returned by On/OnErr, once.
// Naming an event type late ([RegisterEvent]) names the events of that type
// already logged too, so [Session.WriteLog] can write them.
//
// Catching up needs the events since the slice's initial value (or since
// the last [Session.Restore]); with [WithLogLimit] they may have been
// dropped, and On/OnErr then say so. Register a session's slices and
// reducers before dispatching to them and none of this arises.
//
// # Transactions
//
// [Session.Begin] starts a transaction: a view of the session ([Tx.Session],
// itself a *Session) whose dispatches are staged rather than applied.
// Reads through the view see the session as it is now with the staged
// events on top, so code handed the view reads its own writes, and events
// that other goroutines dispatch to the session meanwhile show through.
// [Tx.Commit] applies the staged events as one dispatch: consecutive
// sequence numbers, after whatever others dispatched meanwhile, seen by
// readers all together or not at all. [Tx.Discard] drops them and leaves
// the session as if the transaction had never begun; what others
// dispatched stays. Once a transaction has ended, its view refuses
// dispatches (a goroutine that outlives the work it was started for gets
// an error rather than writing past the commit or discard) and reads show
// the session.
//
// A view keeps each slice's value with its staged events applied, and
// extends it by each event staged, so a transaction of n events runs the
// reducers about n times, as n dispatches to the session do. It computes
// a value again from all its staged events only when what it shows them
// on changed since: an event dispatched to the session, a restore, a
// reducer registered, or, for a transaction begun on a view, an event
// staged in the enclosing one.
//
// This is how a failed tool call changes nothing (package tools): each
// call's handler gets a transaction's view, committed when the call
// succeeds and discarded when it fails, while other calls on the same
// session, and code that holds the session itself (an orchestrator that
// records every command run, failed ones included), dispatch as usual.
//
// Registering slices, reducers and event names through a view registers
// them in the session: they are configuration, not events. A view cannot
// be restored or replay a log.
//
// # Snapshots and logs
//
// [Session.Snapshot] captures every slice's value; [Session.Restore] puts them
// back, and fails, naming the slice, when the snapshot holds a slice the session
// does not have registered.
//
// The log can be saved as JSON lines with [Session.WriteLog] and replayed into a
// fresh session with [Session.ReplayLog]. Replay needs each event type registered
// by name ([RegisterEvent]); a line that is not JSON or names an unregistered
// type fails the whole replay before any event is applied.
package session
