package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/unfold-dev/unfold/tools"
)

// correction is the message that answers a reply with no action, naming
// the environments offered.
func (r *run) correction() string {
	var b strings.Builder
	b.WriteString("I could not find an action in your reply. Reply with exactly one action: ")
	if envs := r.envNames(); len(envs) > 0 {
		fmt.Fprintf(&b, "a fenced code block named after an environment (```%s ... ```; environments: %s), ", envs[0], strings.Join(envs, ", "))
	}
	b.WriteString("a JSON object {\"tool\": \"<name>\", \"input\": {...}}, or {\"final\": \"<your answer>\"} when you are done.")
	return b.String()
}

// envNames returns the environments a text action may name, sorted: all
// but those whose names another tool took ([run.collectTools]).
func (r *run) envNames() []string {
	var names []string
	for name := range r.a.envTool {
		if !r.clashed[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// envNamed returns the offered environment an info string names: the
// name as written, else the one name equal to it but for case.
func (r *run) envNamed(info string) (string, bool) {
	if _, ok := r.a.envTool[info]; ok && !r.clashed[info] {
		return info, true
	}
	found := ""
	for _, name := range r.envNames() {
		if strings.EqualFold(name, info) {
			if found != "" {
				return "", false // two names differ only in case: neither
			}
			found = name
		}
	}
	return found, found != ""
}

// action is what a text-mode reply asks for.
type action struct {
	env   string          // a command for this environment
	tool  string          // or a call of this tool
	input string          // the command text, or the tool's JSON arguments
	final json.RawMessage // or the final answer
}

// textLoop runs steps in text-action mode: one action per reply, answered
// with an observation.
func (r *run) textLoop() error {
	for r.step < r.a.cfg.MaxSteps {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		if err := r.tw.err(); err != nil {
			return err
		}
		r.step++
		// Each model call is a step, a reply after a correction too:
		// MaxSteps bounds the model calls.
		resp, err := r.complete(false)
		if err != nil {
			return err
		}
		r.add(resp.Message)
		if err := r.stopped(resp); err != nil {
			return err
		}
		if resp.Finish == FinishPaused {
			// Sent back as it is, the reply goes on in the next step.
			r.progress(Progress{Kind: "paused", Success: true})
			continue
		}
		act, perr := r.parseAction(resp.Message.Content)
		if perr != nil {
			r.progress(Progress{Kind: "invalid", Detail: perr.Error()})
			r.record(Record{Kind: KindError, Error: "failed step: " + perr.Error()})
			fix := r.correction()
			var amb *ambiguousBlockError
			if errors.As(perr, &amb) {
				fix = amb.correction()
			}
			r.add(Message{Role: RoleUser, Content: fix})
			continue
		}
		if act.final != nil {
			var s string
			if json.Unmarshal(act.final, &s) != nil {
				s = string(act.final)
			}
			r.answer = s
			r.progress(Progress{Kind: "answer", Success: true})
			return nil
		}
		name, res, err := r.runAction(act)
		obs := observation(name, res.Success, res.Message)
		if err == nil {
			err = r.refresh()
		}
		if err != nil {
			// The action's result is kept though the run ends; a run
			// killed before this point has it in the action's tool
			// record, which a resume answers with.
			r.add(Message{Role: RoleUser, Content: obs})
			return err
		}
		if sc := r.screenUpdate(false); sc != "" {
			obs += "\n\n" + sc
		}
		r.add(Message{Role: RoleUser, Content: obs})
		r.saveSession() // the events of the refresh
	}
	return fmt.Errorf("%w (%d steps)", ErrStepLimit, r.a.cfg.MaxSteps)
}

// textActions returns msgs with their tool calls written as text
// actions, each {"tool": name, "input": arguments}, and their results as
// observations, as text mode writes them: for a conversation of a run
// with native actions that a run in text mode goes on with.
func textActions(msgs []Message) []Message {
	out := make([]Message, len(msgs))
	names := map[string]string{} // tool names by call ID
	for i, m := range msgs {
		switch {
		case m.Role == RoleAssistant && len(m.ToolCalls) > 0:
			var parts []string
			if strings.TrimSpace(m.Content) != "" {
				parts = append(parts, m.Content)
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				input := json.RawMessage(orEmpty(c.Arguments))
				if !json.Valid(input) {
					input, _ = json.Marshal(c.Arguments)
				}
				act, _ := json.Marshal(struct {
					Tool  string          `json:"tool"`
					Input json.RawMessage `json:"input"`
				}{c.Name, input})
				parts = append(parts, string(act))
			}
			out[i] = Message{Role: RoleAssistant, Content: strings.Join(parts, "\n\n")}
		case m.Role == RoleTool:
			output, failed := strings.CutPrefix(m.Content, "Error: ")
			// A call that did not run, or whose result was lost, did not
			// succeed as far as the model can know.
			failed = failed || m.Content == notRun || m.Content == wasRunning
			out[i] = Message{Role: RoleUser, Content: observation(names[m.ToolCallID], !failed, output)}
		default:
			out[i] = m
		}
	}
	return out
}

// observation is what a text-mode model reads of an action's result.
func observation(tool string, success bool, output string) string {
	obs, _ := json.Marshal(struct {
		Tool    string `json:"tool"`
		Success bool   `json:"success"`
		Output  string `json:"output"`
	}{tool, success, output})
	return "Observation:\n" + string(obs)
}

// runAction runs an environment command or a tool call.
func (r *run) runAction(act action) (string, tools.Result, error) {
	if act.env != "" {
		// Through the environment's tool even when its section is
		// summarized: running a command is what opens an on-demand one.
		args, _ := json.Marshal(map[string]string{"command": act.input})
		t := r.a.envTool[act.env]
		res, err := r.timed(act.env, string(args), "", func() (tools.Result, error) {
			if r.a.cfg.DryRun {
				return dryRun(act.env, string(args)), nil
			}
			return r.runTool(act.env, t, string(args))
		})
		return act.env, res, err
	}
	res, err := r.call(act.tool, act.input, "")
	return act.tool, res, err
}

// parseAction finds the first action in a reply: a fenced block named after
// an environment or a tool, a ```json block or a bare JSON object holding
// {"tool", "input"} or {"final"}.
func (r *run) parseAction(text string) (action, error) {
	return r.parseActionFrom(newBlockReader(text), text)
}

// parseActionFrom is [run.parseAction] reading the blocks of text with br,
// which it stops reading at the first action.
func (r *run) parseActionFrom(br *blockReader, text string) (action, error) {
	for {
		b, ok := br.block()
		if !ok {
			break
		}
		if env, ok := r.envNamed(b.info); ok {
			if b.ambiguous {
				return action{}, &ambiguousBlockError{info: b.info}
			}
			return action{env: env, input: b.body}, nil
		}
		info := b.info
		if strings.EqualFold(info, "json") || info == "" {
			if act, ok := r.jsonAction(b.body); ok {
				return act, nil
			}
			continue
		}
		for _, name := range []string{info, strings.ToLower(info)} {
			if t, ok := r.byName[name]; ok {
				if field := singleStringField(t); field != "" {
					if b.ambiguous {
						return action{}, &ambiguousBlockError{info: b.info}
					}
					args, _ := json.Marshal(map[string]string{field: b.body})
					return action{tool: name, input: string(args)}, nil
				}
			}
		}
	}
	// A JSON action has a "tool" or "final" key: decode only from the '{'
	// just before such a key, a bounded number of times, so a long
	// malformed reply costs linear time rather than a decode per brace.
	if len(text) > maxActionScan {
		text = text[:maxActionScan]
	}
	tried := 0
	for at := 0; at < len(text) && tried < maxActionTries; {
		k := indexKey(text[at:])
		if k < 0 {
			break
		}
		k += at
		at = k + 1
		// The key's object starts at one of the braces before it, the
		// nearest unless the key follows a nested value: try a few.
		for i, n := k, 0; n < 4 && tried < maxActionTries; n++ {
			i = strings.LastIndexByte(text[:i], '{')
			if i < 0 {
				break
			}
			tried++
			dec := json.NewDecoder(strings.NewReader(text[i:]))
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				continue
			}
			if act, ok := r.jsonAction(string(raw)); ok {
				return act, nil
			}
		}
	}
	return action{}, errors.New("no action found in the reply")
}

// ambiguousBlockError refuses an action block opened by three backticks
// whose end the text does not tell ([blockReader]): run cut short, it
// could write a truncated file.
type ambiguousBlockError struct{ info string }

func (e *ambiguousBlockError) Error() string {
	return fmt.Sprintf("parse action: the ```%s block is ambiguous: it holds a fenced example, and more than one closing fence could end it", e.info)
}

// correction answers the reply that held the block.
func (e *ambiguousBlockError) correction() string {
	return fmt.Sprintf("Your ```%[1]s block was not run: it holds a fenced example (a fence with a language), and more than one line of only ``` could end it, so where it ends is ambiguous. Fence the block with four backticks (````%[1]s ... ````), which only a line of four or more backticks closes, and send it again.", e.info)
}

// indexKey returns the index of the first "tool" or "final" key in s, or -1.
func indexKey(s string) int {
	t, f := strings.Index(s, `"tool"`), strings.Index(s, `"final"`)
	switch {
	case t < 0:
		return f
	case f < 0:
		return t
	}
	return min(t, f)
}

// maxActionTries bounds the JSON decodes one reply costs.
const maxActionTries = 32

// jsonAction reads {"tool": name, "input": ...} or {"final": ...}.
func (r *run) jsonAction(s string) (action, bool) {
	var obj struct {
		Tool  *string         `json:"tool"`
		Input json.RawMessage `json:"input"`
		Final json.RawMessage `json:"final"`
	}
	if json.Unmarshal([]byte(s), &obj) != nil {
		return action{}, false
	}
	if obj.Final != nil && obj.Tool == nil {
		return action{final: obj.Final}, true
	}
	if obj.Tool == nil {
		return action{}, false
	}
	name := *obj.Tool
	input := bytes.TrimSpace(obj.Input)
	var str string
	if len(input) > 0 && input[0] == '"' && json.Unmarshal(input, &str) == nil {
		// A string input: a command for an environment, or the one string
		// field of a tool.
		if t, ok := r.byName[name]; ok {
			if field := singleStringField(t); field != "" {
				args, _ := json.Marshal(map[string]string{field: str})
				return action{tool: name, input: string(args)}, true
			}
		}
		if env, ok := r.envNamed(name); ok {
			return action{env: env, input: str}, true
		}
	}
	return action{tool: name, input: string(input)}, true
}

// singleStringField returns the name of a tool's only required string
// property, or "" when its input is not like that.
func singleStringField(t *tools.Tool) string {
	var s struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(t.InputSchema(), &s) != nil || len(s.Required) != 1 {
		return ""
	}
	if p, ok := s.Properties[s.Required[0]]; ok && p.Type == "string" {
		return s.Required[0]
	}
	return ""
}

// fenced is a fenced code block. ambiguous marks a block opened by three
// backticks that more than one closer could end ([blockReader.end]).
type fenced struct {
	info, body string
	ambiguous  bool
}

// fence is a code fence line: its character (` or ~), its length, and its
// info string's first word.
type fence struct {
	ch   byte
	n    int
	info string
}

// fenceLine reads line as a code fence, indented at most 3 spaces. As in
// CommonMark, a backtick fence's info string holds no backtick, so
// ```inline``` text is no fence.
func fenceLine(line string) (fence, bool) {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 || !(strings.HasPrefix(l, "```") || strings.HasPrefix(l, "~~~")) {
		return fence{}, false
	}
	ch := l[0]
	n := len(l) - len(strings.TrimLeft(l, string(ch)))
	if ch == '`' && strings.IndexByte(l[n:], '`') >= 0 {
		return fence{}, false
	}
	info, _, _ := strings.Cut(strings.TrimSpace(l[n:]), " ")
	return fence{ch: ch, n: n, info: info}, true
}

// closes reports whether the fence f, a bare fence line, closes a block
// opened by open: as in CommonMark, the same character, at least as long.
func (f fence) closes(open fence) bool {
	return f.info == "" && f.ch == open.ch && f.n >= open.n
}

// blockReader reads the fenced blocks of a reply one at a time, so a
// caller stops at the one it wants.
//
// A block opened by a fence longer than three characters (````editor)
// closes as in CommonMark: at the first bare fence of its character at
// least as long. A block opened by three may hold a Markdown example whose
// fences are as long as its own (```sh ... ``` in an edit), so when a
// fence with an info string comes before its first possible closer, the
// block ends at the first possible closer after which the rest of the text
// pairs its fences up (every block it opens is closed). So an example
// inside the block stays whole, and an example left open (the edit
// changes only a fence's first line) does not make the block swallow the
// prose and the blocks after it. When a later closer outside every example
// opened in the block would also leave the rest paired, the text cannot
// tell where the block ends: it is marked ambiguous, and ends at the first
// such closer. When no closer leaves the rest paired up (a reply cut
// short), the block ends where reading its fences as nested closes it,
// else at its first possible closer. A block never closed runs to the end
// of the text.
//
// Weighing closers reads the rest of the text again for each, so the lines
// a reply may cost are bounded, linear in its length: a block whose end is
// not decided within that bound is marked ambiguous too.
type blockReader struct {
	lines  []string
	at     int // the next line to read
	visits int // the lines read, weighing included
	budget int // the visits weighing closers may reach
}

func newBlockReader(text string) *blockReader {
	lines := strings.Split(text, "\n")
	return &blockReader{lines: lines, budget: 16*len(lines) + 1<<14}
}

// fence reads lines[j] as a fence.
func (br *blockReader) fence(j int) (fence, bool) {
	br.visits++
	return fenceLine(br.lines[j])
}

func (br *blockReader) spent() bool { return br.visits >= br.budget }

// block returns the next block, or false after the last.
func (br *blockReader) block() (fenced, bool) {
	for ; br.at < len(br.lines); br.at++ {
		open, ok := br.fence(br.at)
		if !ok {
			continue
		}
		end, ambiguous := br.end(br.at, open)
		b := fenced{info: open.info, body: strings.Join(br.lines[br.at+1:end], "\n"), ambiguous: ambiguous}
		br.at = end + 1
		return b, true
	}
	return fenced{}, false
}

// end returns the index of the line closing the block opened by open at
// lines[i], or len(lines) when none does, and whether that end is
// ambiguous ([blockReader]).
func (br *blockReader) end(i int, open fence) (int, bool) {
	first, example := -1, false
	for j := i + 1; j < len(br.lines) && first < 0; j++ {
		f, ok := br.fence(j)
		switch {
		case !ok:
		case f.closes(open):
			first = j
		case f.info != "" && f.ch == open.ch:
			example = true
		}
	}
	if first < 0 {
		return len(br.lines), false
	}
	if !example || open.n > 3 {
		return first, false
	}
	chosen := -1
	var nested []fence // the examples open at j, innermost last
	for j := i + 1; j < len(br.lines); j++ {
		if br.spent() {
			return max(chosen, first), true
		}
		f, ok := br.fence(j)
		if !ok {
			continue
		}
		outside := len(nested) == 0
		switch {
		case !outside && f.closes(nested[len(nested)-1]):
			nested = nested[:len(nested)-1]
		case f.info != "" && f.ch == open.ch:
			nested = append(nested, f)
		}
		if j < first || !f.closes(open) || (chosen >= 0 && !outside) {
			continue
		}
		if br.paired(j + 1) {
			if chosen >= 0 {
				return chosen, true
			}
			chosen = j
		}
	}
	if br.spent() {
		return max(chosen, first), true
	}
	if chosen >= 0 {
		return chosen, false
	}
	if end := br.nestedEnd(i, open); end < len(br.lines) {
		return end, false
	}
	return first, false
}

// paired reports whether every block the lines from the one at from open
// is closed, read with nesting ([blockReader.nestedEnd]).
func (br *blockReader) paired(from int) bool {
	for j := from; j < len(br.lines); j++ {
		if br.spent() {
			return false
		}
		open, ok := br.fence(j)
		if !ok {
			continue
		}
		end := br.nestedEnd(j, open)
		if end == len(br.lines) {
			return false
		}
		j = end
	}
	return true
}

// nestedEnd returns the index of the line closing the block opened by
// open at lines[i], reading a fence with an info string of its character
// inside it as a nested block that the next bare fence closes (for a
// block opened by three characters), or len(lines).
func (br *blockReader) nestedEnd(i int, open fence) int {
	var nested []fence // the fences opened inside the block, innermost last
	for j := i + 1; j < len(br.lines); j++ {
		if br.spent() {
			return len(br.lines)
		}
		f, ok := br.fence(j)
		if !ok {
			continue
		}
		switch {
		case len(nested) > 0 && f.closes(nested[len(nested)-1]):
			nested = nested[:len(nested)-1]
		case f.info != "" && f.ch == open.ch && open.n == 3:
			nested = append(nested, f)
		case len(nested) == 0 && f.closes(open):
			return j
		}
	}
	return len(br.lines)
}

// actionInstructions tells a text-mode model how to act, listing the
// environments and tools offered now.
func (r *run) actionInstructions() string {
	var b strings.Builder
	b.WriteString("# Actions\n\nAct by writing exactly one action per reply; you will get an observation back.\n\n")
	envNames := r.envNames()
	if len(envNames) > 0 {
		b.WriteString("To run a command in an environment, write a fenced code block whose info string is the environment's name:\n\n")
		fmt.Fprintf(&b, "````\n```%s\n<command>\n```\n````\n\nWhen the command's text holds a line starting with ``` (a Markdown example in a file you edit, say), fence the block with more backticks than any line inside it (````%s ... ````): the block ends at the first line of only backticks at least as long as its opening fence. A block opened by three backticks that holds a fenced example (```sh ... ```) ends at the first line of only ``` after which every block in the rest of your reply is closed; when a later such line, outside the examples, would do too, the block is ambiguous: it is not run, and you will be asked to fence it with four backticks.\n\nEnvironments: %s.\n\n", envNames[0], envNames[0], strings.Join(envNames, ", "))
	}
	b.WriteString("To call a tool, write a JSON object: {\"tool\": \"<name>\", \"input\": {<arguments>}}. Tools and their input schemas:\n\n")
	for _, t := range r.offered {
		if r.a.envTool[t.Name()] == t {
			continue
		}
		b.WriteString(toolLine(t))
	}
	b.WriteString("\nWhen you are done, reply with {\"final\": \"<your answer>\"}.")
	return b.String()
}

// toolLine describes a tool for a text-mode model, one line.
func toolLine(t *tools.Tool) string {
	return fmt.Sprintf("- %s: %s Input schema: %s\n", t.Name(), t.Description(), compactJSON(t.InputSchema()))
}

func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// maxActionScan bounds how much of a reply is searched for a JSON action.
const maxActionScan = 64 << 10
