package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/big"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/unfold-dev/unfold/tools"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func nop[In, Out any](_ context.Context, _ tools.Context, in In) (Out, error) {
	var out Out
	return out, nil
}

// inputSchema builds a tool with input type In and returns its input schema.
func inputSchema[In any](t *testing.T) string {
	t.Helper()
	tool, err := tools.New("t", "test tool", nop[In, struct{}])
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := tools.CompileInput(tool); err != nil {
		t.Fatalf("the inferred input schema does not compile: %v", err)
	}
	return string(tool.InputSchema())
}

// outputSchema builds a tool with output type Out and returns its output schema.
func outputSchema[Out any](t *testing.T) string {
	t.Helper()
	tool, err := tools.New("t", "test tool", nop[struct{}, Out])
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return string(tool.OutputSchema())
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, s)
	}
	return b.String()
}

// Types for the inference table.
type (
	Base struct {
		ID   string `json:"id"`
		Note string `json:"note,omitempty"`
	}
	basePrivate struct {
		Hidden int `json:"hidden"`
	}
	withEmbedded struct {
		Base
		*basePrivate
		Name string `json:"name"`
	}
	shadow struct {
		Base
		ID int `json:"id"` // shallower field wins over Base.ID
	}
	conflictA struct {
		X int
	}
	conflictB struct {
		X string
	}
	conflicting struct {
		conflictA
		conflictB
		Y bool `json:"y"`
	}
	embeddedTagged struct {
		Base `json:"base"`
	}
	tags struct {
		Plain    string
		Renamed  string `json:"renamed"`
		Skipped  string `json:"-"`
		Dash     string `json:"-,"`
		Optional string `json:",omitempty"`
		Zero     int    `json:"zero,omitzero"`
		Quoted   int    `json:"quoted,string"`
		private  string
	}
	described struct {
		Query string   `json:"query" description:"words to <find> & rank"`
		Mode  string   `json:"mode,omitempty" enum:"fast,slow" description:"how hard to look"`
		Kinds []string `json:"kinds,omitempty" enum:"a,b" description:"kinds of <match>"`
		Ptr   *string  `json:"ptr,omitempty" enum:"x"`
	}
	textish struct {
		Addr netip.Addr       `json:"addr"`
		Big  *big.Int         `json:"big"`
		Raw  *json.RawMessage `json:"raw"`
		Any  *any             `json:"any"`
	}
	pointers struct {
		P  *int       `json:"p"`
		PP **string   `json:"pp"`
		PS *[]float64 `json:"ps"`
		PT *time.Time `json:"pt"`
	}
	named string
)

func TestInputSchema(t *testing.T) {
	tests := []struct {
		name string
		got  func(t *testing.T) string
		want string
	}{
		{"empty struct", inputSchema[struct{}],
			`{"type":"object","properties":{},"additionalProperties":false}`},
		{"scalars", inputSchema[struct {
			S  string  `json:"s"`
			B  bool    `json:"b"`
			I  int     `json:"i"`
			I8 int8    `json:"i8"`
			U  uint    `json:"u"`
			U8 uint8   `json:"u8"`
			F  float32 `json:"f"`
			D  float64 `json:"d"`
			N  named   `json:"n"`
		}],
			`{"type":"object","properties":{
				"s":{"type":"string"},"b":{"type":"boolean"},
				"i":{"type":"integer"},"i8":{"type":"integer","minimum":-128,"maximum":127},
				"u":{"type":"integer","minimum":0},"u8":{"type":"integer","minimum":0,"maximum":255},
				"f":{"type":"number"},"d":{"type":"number"},"n":{"type":"string"}},
			"required":["s","b","i","i8","u","u8","f","d","n"],"additionalProperties":false}`},
		{"tags", inputSchema[tags],
			`{"type":"object","properties":{
				"Plain":{"type":"string"},"renamed":{"type":"string"},"-":{"type":"string"},
				"Optional":{"type":"string"},"zero":{"type":"integer"},"quoted":{"type":"string","pattern":"^-?[0-9]+$","description":"Send an integer written as a string, like \"42\"."}},
			"required":["Plain","renamed","-","quoted"],"additionalProperties":false}`},
		{"descriptions and enums", inputSchema[described],
			`{"type":"object","properties":{
				"query":{"type":"string","description":"words to <find> & rank"},
				"mode":{"type":"string","description":"how hard to look","enum":["fast","slow"]},
				"kinds":{"type":"array","description":"kinds of <match>","items":{"type":"string","enum":["a","b"]}},
				"ptr":{"type":"string","enum":["x"]}},
			"required":["query"],"additionalProperties":false}`},
		{"collections", inputSchema[struct {
			List  []string           `json:"list"`
			Arr   [3]int             `json:"arr"`
			Bytes []byte             `json:"bytes"`
			Map   map[string]bool    `json:"map"`
			Named map[named][]int    `json:"named"`
			Any   []any              `json:"any"`
			Raw   json.RawMessage    `json:"raw"`
			Num   json.Number        `json:"num"`
			Deep  [][]map[string]int `json:"deep"`
		}],
			`{"type":"object","properties":{
				"list":{"type":"array","items":{"type":"string"}},
				"arr":{"type":"array","minItems":3,"maxItems":3,"items":{"type":"integer"}},
				"bytes":{"type":"string","contentEncoding":"base64"},
				"map":{"type":"object","additionalProperties":{"type":"boolean"}},
				"named":{"type":"object","additionalProperties":{"type":"array","items":{"type":"integer"}}},
				"any":{"type":"array","items":{}},
				"raw":{},
				"num":{"type":"number"},
				"deep":{"type":"array","items":{"type":"array","items":{"type":"object","additionalProperties":{"type":"integer"}}}}},
			"required":["list","arr","bytes","map","named","any","raw","num","deep"],"additionalProperties":false}`},
		{"pointers and time", inputSchema[pointers],
			`{"type":"object","properties":{
				"p":{"type":"integer"},"pp":{"type":"string"},
				"ps":{"type":"array","items":{"type":"number"}},
				"pt":{"type":"string","format":"date-time"}},
			"required":["p","pp","ps","pt"],"additionalProperties":false}`},
		{"custom text and json", inputSchema[textish],
			`{"type":"object","properties":{"addr":{"type":"string"},"big":{},"raw":{},"any":{}},
			"required":["addr","big","raw","any"],"additionalProperties":false}`},
		{"embedded structs are flattened", inputSchema[withEmbedded],
			`{"type":"object","properties":{
				"id":{"type":"string"},"note":{"type":"string"},
				"hidden":{"type":"integer"},"name":{"type":"string"}},
			"required":["id","hidden","name"],"additionalProperties":false}`},
		{"shallow field wins", inputSchema[shadow],
			`{"type":"object","properties":{"note":{"type":"string"},"id":{"type":"integer"}},
			"required":["id"],"additionalProperties":false}`},
		{"a Go field hides a promoted one of another JSON name", inputSchema[struct {
			Base
			ID int `json:"ident"`
		}],
			`{"type":"object","properties":{"note":{"type":"string"},"ident":{"type":"integer"}},
			"required":["ident"],"additionalProperties":false}`},
		{"conflicting fields cancel", inputSchema[conflicting],
			`{"type":"object","properties":{"y":{"type":"boolean"}},"required":["y"],"additionalProperties":false}`},
		{"named struct field", inputSchema[struct {
			Base Base `json:"base"`
		}],
			`{"type":"object","properties":{"base":{"type":"object","properties":{
				"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}},
			"required":["base"],"additionalProperties":false}`},
		{"as written, not true nor HTML escapes", inputSchema[struct {
			A any    `json:"a" description:"true <or> \\u003c & \"true\""`
			B []any  `json:"b"`
			C string `json:"c" enum:"true,<>"`
		}],
			`{"type":"object","properties":{
				"a":{"description":"true <or> \\u003c & \"true\""},
				"b":{"type":"array","items":{}},
				"c":{"type":"string","enum":["true","<>"]}},
			"required":["a","b","c"],"additionalProperties":false}`},
		{"interfaces", inputSchema[struct {
			A any   `json:"a"`
			E error `json:"e,omitempty"`
		}],
			`{"type":"object","properties":{"a":{},"e":{}},"required":["a"],"additionalProperties":false}`},
		{"output string", outputSchema[string], `{"type":"string"}`},
		{"output slice", outputSchema[[]int], `{"type":"array","items":{"type":"integer"}}`},
		{"output any", outputSchema[any], `{}`},
		{"output time", outputSchema[time.Time], `{"type":"string","format":"date-time"}`},
		{"output struct pointer", outputSchema[*Base],
			`{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := tt.got(t), compact(t, tt.want)
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if _, err := jsonschema.CompileString("mem://test.json", got); err != nil {
				t.Errorf("schema does not compile: %v", err)
			}
		})
	}
}

// kitchenSink uses every supported kind at once; its schema is a golden file.
type kitchenSink struct {
	Base
	Title    string            `json:"title" description:"Short title, shown in lists."`
	Tags     []string          `json:"tags,omitempty" enum:"red,green,blue"`
	Count    int               `json:"count"`
	Ratio    float64           `json:"ratio,omitempty"`
	When     time.Time         `json:"when,omitzero" description:"RFC 3339 time."`
	Labels   map[string]string `json:"labels,omitempty"`
	Children []struct {
		Key   string `json:"key"`
		Value any    `json:"value,omitempty"`
	} `json:"children,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty"`
	Blob  []byte          `json:"blob,omitempty"`
	Grid  [2][2]uint16    `json:"grid,omitempty"`
}

func TestInputSchemaGolden(t *testing.T) {
	tool := tools.MustNew("kitchen_sink", "Every kind of field.", nop[kitchenSink, kitchenSink])
	if err := tools.CompileInput(tool); err != nil {
		t.Fatalf("the inferred input schema does not compile: %v", err)
	}
	for _, c := range []struct {
		name   string
		schema json.RawMessage
	}{
		{"input", tool.InputSchema()},
		{"output", tool.OutputSchema()},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := json.Indent(&b, c.schema, "", "  "); err != nil {
				t.Fatalf("schema is not JSON: %v", err)
			}
			b.WriteByte('\n')
			golden := filepath.Join("testdata", "kitchen_sink."+c.name+".json")
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got := b.String(); got != string(want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestSchemaIsCopy(t *testing.T) {
	tool := tools.MustNew("copy", "A tool.", nop[Base, Base])
	for name, get := range map[string]func() json.RawMessage{"input": tool.InputSchema, "output": tool.OutputSchema} {
		t.Run(name, func(t *testing.T) {
			first := get()
			want := string(first)
			for i := range first {
				first[i] = 'x'
			}
			if got := string(get()); got != want {
				t.Errorf("got %s after changing a returned copy, want %s", got, want)
			}
		})
	}
}

// Types New must refuse.
type (
	node struct {
		Name     string  `json:"name"`
		Children []*node `json:"children"`
	}
	list  []list
	tree  map[string]tree
	outer struct {
		Items []struct {
			Next *node `json:"next"`
		} `json:"items"`
	}
	withChan struct {
		C chan int `json:"c"`
	}
	withFunc struct {
		F func() `json:"f"`
	}
	withComplex struct {
		Z complex128 `json:"z"`
	}
	withIntMap struct {
		M map[int]string `json:"m"`
	}
	embedsChan struct {
		Base
		Inner struct {
			Deep map[string][]chan bool `json:"deep"`
		} `json:"inner"`
	}
	badEnumInt struct {
		N int `json:"n" enum:"1,2"`
	}
	badEnumEmpty struct {
		S string `json:"s" enum:"a,,b"`
	}
	badEnumDup struct {
		S string `json:"s" enum:"a,b,a"`
	}
	badEnumTime struct {
		T []time.Time `json:"t" enum:"a"`
	}
	badTag struct {
		Name string `json:"bad\"tag"`
	}
	Label       string
	embedsLabel struct {
		Label
		named // unexported and not a struct: encoding/json leaves it out too
	}
	embedsHidden struct {
		Base `json:"-"`
		Name string `json:"name"`
	}
	sameName struct {
		Ident int `json:"id"`
		Base
	}
)

func TestNewTypeErrors(t *testing.T) {
	tests := []struct {
		name     string
		new      func() (*tools.Tool, error)
		path     string // TypeError.Path
		contains string // in the error text
	}{
		{"recursive struct", func() (*tools.Tool, error) { return tools.New("t", "d", nop[node, struct{}]) },
			"Children[]", "recursive types are not supported"},
		{"recursive nested", func() (*tools.Tool, error) { return tools.New("t", "d", nop[outer, struct{}]) },
			"Items[].Next.Children[]", `tool "t": input type tools_test.outer: field Items[].Next.Children[]: unsupported type *tools_test.node`},
		{"recursive slice output", func() (*tools.Tool, error) { return tools.New("t", "d", nop[struct{}, list]) },
			"[]", "output type tools_test.list"},
		{"recursive map output", func() (*tools.Tool, error) { return tools.New("t", "d", nop[struct{}, tree]) },
			"[]", "recursive types"},
		{"channel", func() (*tools.Tool, error) { return tools.New("t", "d", nop[withChan, struct{}]) },
			"C", "field C: unsupported type chan int: channels have no JSON form"},
		{"func", func() (*tools.Tool, error) { return tools.New("t", "d", nop[withFunc, struct{}]) },
			"F", "functions have no JSON form"},
		{"complex", func() (*tools.Tool, error) { return tools.New("t", "d", nop[withComplex, struct{}]) },
			"Z", "complex numbers have no JSON form"},
		{"int map keys", func() (*tools.Tool, error) { return tools.New("t", "d", nop[withIntMap, struct{}]) },
			"M", "map keys must be strings"},
		{"deep channel", func() (*tools.Tool, error) { return tools.New("t", "d", nop[embedsChan, struct{}]) },
			"Inner.Deep[][]", "unsupported type chan bool"},
		{"output channel", func() (*tools.Tool, error) { return tools.New("t", "d", nop[struct{}, chan int]) },
			"", "output type chan int: unsupported type chan int"},
		{"enum on int", func() (*tools.Tool, error) { return tools.New("t", "d", nop[badEnumInt, struct{}]) },
			"N", "enum tag applies to string fields"},
		{"enum with empty value", func() (*tools.Tool, error) { return tools.New("t", "d", nop[badEnumEmpty, struct{}]) },
			"S", "empty value"},
		{"enum with duplicate", func() (*tools.Tool, error) { return tools.New("t", "d", nop[badEnumDup, struct{}]) },
			"S", `lists "a" twice`},
		{"enum on times", func() (*tools.Tool, error) { return tools.New("t", "d", nop[badEnumTime, struct{}]) },
			"T", "enum tag applies to string fields"},
		{"json name encoding/json ignores", func() (*tools.Tool, error) { return tools.New("t", "d", nop[badTag, struct{}]) },
			"Name", `encoding/json ignores the json name "bad\"tag" and uses Name`},
		{"tagged embedded struct", func() (*tools.Tool, error) { return tools.New("t", "d", nop[embeddedTagged, struct{}]) },
			"Base", "an embedded field is flattened only when it is a struct without a json name; make it a named field"},
		{"embedded struct left out", func() (*tools.Tool, error) { return tools.New("t", "d", nop[embedsHidden, struct{}]) },
			"Base", "make it a named field"},
		{"embedded string", func() (*tools.Tool, error) { return tools.New("t", "d", nop[struct{}, embedsLabel]) },
			"Label", "an embedded field is flattened only when it is a struct"},
		{"two fields with one json name", func() (*tools.Tool, error) { return tools.New("t", "d", nop[sameName, struct{}]) },
			"Base.ID", `another field of tools_test.sameName is named "id" in JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := tt.new()
			if err == nil {
				t.Fatalf("got tool %q and nil error, want an error", tool.Name())
			}
			var te *tools.TypeError
			if !errors.As(err, &te) {
				t.Fatalf("got %T %v, want a *tools.TypeError", err, err)
			}
			if te.Path != tt.path {
				t.Errorf("got path %q, want %q", te.Path, tt.path)
			}
			if !strings.HasPrefix(err.Error(), "tools: new: ") || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("got %q, want a tools: new: error containing %q", err, tt.contains)
			}
		})
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		new  func() (*tools.Tool, error)
		want string
	}{
		{"input int", func() (*tools.Tool, error) { return tools.New("t", "d", nop[int, string]) },
			`tools: new: tool "t": input type int is not a struct; tool arguments are a JSON object, so use a struct (struct{} for none)`},
		{"input pointer", func() (*tools.Tool, error) { return tools.New("t", "d", nop[*Base, string]) },
			`tools: new: tool "t": input type *tools_test.Base is not a struct; tool arguments are a JSON object, so use a struct (struct{} for none)`},
		{"input map", func() (*tools.Tool, error) { return tools.New("t", "d", nop[map[string]any, string]) },
			`tools: new: tool "t": input type map[string]interface {} is not a struct; tool arguments are a JSON object, so use a struct (struct{} for none)`},
		{"input with JSON methods", func() (*tools.Tool, error) { return tools.New("t", "d", nop[netip.AddrPort, string]) },
			`tools: new: tool "t": input type netip.AddrPort has its own JSON or text encoding methods, so no schema can list its fields; use a struct without them`},
		{"empty description", func() (*tools.Tool, error) { return tools.New("t", " \n", nop[Base, string]) },
			`tools: new: tool "t": empty description; say what the tool does and when to use it`},
		{"nil handler", func() (*tools.Tool, error) { return tools.New[Base, string]("t", "d", nil) },
			`tools: new: tool "t": nil handler`},
		{"bad name", func() (*tools.Tool, error) { return tools.New("a.b", "d", nop[Base, string]) },
			`tools: new: invalid tool name "a.b": character '.' at byte 1 is not allowed; names must match ^[a-zA-Z0-9_-]{1,64}$ (ASCII letters, digits, '_' and '-')`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.new()
			if err == nil {
				t.Fatalf("got nil error, want %q", tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMustNewPanics(t *testing.T) {
	defer func() {
		r := recover()
		err, ok := r.(error)
		if !ok || !errors.Is(err, tools.ErrInvalidName) {
			t.Errorf("got panic value %v, want an error wrapping ErrInvalidName", r)
		}
	}()
	tools.MustNew("bad name", "d", nop[Base, string])
	t.Error("MustNew returned, want a panic")
}
