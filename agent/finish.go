package agent

import "fmt"

// Finish is why a model stopped writing a reply, the providers' stop
// reasons (finish_reason, stop_reason, a response's status) mapped onto
// the few the loop acts on. The provider's own word stays in
// [Response.FinishReason] and the transcript.
type Finish string

// The ways a reply ends. The zero value is taken as FinishComplete, so a
// [Model] that does not say is read as one that finished.
const (
	// FinishComplete: the model finished its reply: an answer, or tool
	// calls to run (end_turn, tool_use, stop, tool_calls, completed).
	FinishComplete Finish = "complete"
	// FinishTruncated: the reply was cut at a token limit, the output
	// limit or the context window (max_tokens, length,
	// max_output_tokens, model_context_window_exceeded).
	FinishTruncated Finish = "truncated"
	// FinishRefused: the model declined to answer (refusal).
	FinishRefused Finish = "refused"
	// FinishFiltered: the provider's content filter stopped or withheld
	// the reply (content_filter).
	FinishFiltered Finish = "filtered"
	// FinishPaused: the provider paused a long turn (pause_turn, while
	// its server-side tools work); sending the reply back continues it.
	FinishPaused Finish = "paused"
)

// StopError ends a run at a reply the model did not finish: cut at a
// token limit, refused, or stopped by a content filter. The reply's text
// is the [Result]'s Answer and stays in the transcript.
type StopError struct {
	Finish Finish // FinishTruncated, FinishRefused or FinishFiltered
	Reason string // the provider's own word, such as max_tokens or length
	// Call names the tool call the model was writing when its reply was
	// cut, for a run that stopped because replies kept being cut there.
	Call string
}

func (e *StopError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = string(e.Finish)
	}
	switch {
	case e.Call != "":
		return fmt.Sprintf("agent: the model's replies were cut short (%s) twice in a row while it was writing a call of %s: allow the model more output tokens, or ask for the work in smaller pieces", reason, e.Call)
	case e.Finish == FinishRefused:
		return "agent: the model refused to answer"
	case e.Finish == FinishFiltered:
		return fmt.Sprintf("agent: the provider's content filter stopped the reply (%s)", reason)
	case reason == "model_context_window_exceeded":
		return fmt.Sprintf("agent: the reply was cut short (%s): the conversation filled the model's context window", reason)
	}
	return fmt.Sprintf("agent: the reply was cut short (%s): the model reached its output token limit before it finished; ask for less, or raise the model's output limit", reason)
}

// maxCutReplies ends a run after this many replies in a row were cut
// while writing a tool call: the model was told each time, and each try
// costs a whole reply of output tokens.
const maxCutReplies = 2

// cutCall answers a tool call whose reply was cut while the model was
// writing it: the arguments are incomplete, so the call does not run.
const cutCall = "This call did not run: your reply was cut short (the output token limit) while you were writing it, so its arguments are incomplete. Make the call again; if its arguments are long, split the work into smaller calls."

// stopped returns the error that ends the run at resp, or nil when the
// loop goes on with it: a refused or filtered reply ends the run, and so
// does a truncated one without tool calls (a cut tool call is answered,
// see cutCall). The reply's text becomes the answer.
func (r *run) stopped(resp Response) error {
	switch resp.Finish {
	case FinishRefused, FinishFiltered:
	case FinishTruncated:
		if len(resp.Message.ToolCalls) > 0 {
			return nil
		}
	default:
		return nil
	}
	r.answer = resp.Message.Content
	// The reply's calls, if any, are answered, so the conversation stays
	// valid for a resume.
	for _, c := range resp.Message.ToolCalls {
		r.add(Message{Role: RoleTool, ToolCallID: c.ID, Content: notRun})
	}
	r.progress(Progress{Kind: "stopped", Detail: fmt.Sprintf("%s (%s)", resp.Finish, resp.FinishReason)})
	return &StopError{Finish: resp.Finish, Reason: resp.FinishReason}
}

// maxEmptyReplies ends a run after this many replies in a row with no
// text and no tool calls: the model was told after the first.
const maxEmptyReplies = 2

// emptyReply answers a reply with no text and no tool calls.
const emptyReply = "Your reply was empty: it had no text and no tool calls. Continue the task, or give your final answer."
