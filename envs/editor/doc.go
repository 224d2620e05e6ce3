// Package editor is the file editor environment: views of files bounded by
// regular expressions that follow the code as it changes, views by line
// number and of whole files, line edits that are refused when the file
// changed under them, undo, search, directory listings and file creation,
// all confined to a project root.
//
// # Commands
//
//	view <file> /<start>/ /<end>/ [label]   (an optional "to" between the patterns)
//	view <file> <from>-<to> [label]         (or "<from> <to>"; "<from>-" to the end)
//	view <file>                             the whole file
//	view <dir>                              a listing, two levels deep
//	edit <file> <start>-<end>               then the new lines
//	search "<pattern>" <glob>
//	create <file>                           then the content lines
//	close <id>
//	next_match <id>
//	prev_match <id>
//	undo <file>
//
// Patterns are Go RE2 regular expressions matched against one line at a
// time, without its line ending; \/ is a slash inside a pattern. A file name
// with spaces is written in double quotes, where \" and \\ are a quote and a
// backslash, and Go's escapes (\n, \t, \x1b, \u2028, \xff) the characters
// they stand for where the editor itself writes them: a control character,
// a character that does not print, a byte that is not UTF-8; any other
// backslash is itself, so "a\x2db.mount", a systemd unit's name, is that
// name. Responses, error messages and the screen print a name with a
// control character, a character that does not print, bytes that are not
// UTF-8, a backslash or a double quote quoted and escaped
// (strconv.Quote), so a name cannot make a line of its own, and the
// quoted name reads back as the same name; so is a name with a part that
// begins or ends with white space ("d/a.txt "), which would look like
// another name bare. For edit and create, everything
// after the first line is the content, byte for byte; a final newline ends
// the last line rather than adding an empty one, and create ends a last
// line that has none as the lines before it end (CRLF or LF). New text
// holding a NUL byte is refused, naming its line: the editor writes text,
// and would take the file for binary afterwards. An edit deletes its lines
// when the command line ends in a newline with nothing after it ("Deleted
// a.txt lines 2-2 (the edit had no new lines); undo a.txt puts them
// back"); an edit without that newline, the command line alone, is
// refused, as new lines that were forgotten or sent apart. Responses are worded as
// the editor design lists them: "Added view [1] src/main.c /^int main\(/
// to /^}$/", "Edited src/main.c lines 121-121", "Matches:" and
// "path:line: text" lines, "Created notes.md", "Closed view [1]",
// "Showing match 2/2".
//
// # Views
//
// Every screen re-reads each viewed file. For a view by patterns, all lines
// matching the start pattern are matches; the view shows the one selected
// with next_match and prev_match ("(match 2/3)"; the matches are counted up
// to 10,000, "(match 2/10000+)" past that; prev_match from the first then
// finds the last match from the end of the file, "(the last match of
// 10000+)"), from its line to the first
// line after it that matches the end pattern, at most 1,000 lines; past
// that it is cut and marked "[TRUNCATED: end pattern not found within 1000
// lines]". A view by lines shows those lines, as tracebacks and compilers
// number them; when an edit through the editor adds or removes lines above
// them, the view's numbers move with them, and when the file changed
// outside the editor, the view looks for the lines it showed and moves to
// where they are now. A view of the whole file shows up to 1,000 lines and
// is marked truncated only when the file has more, saying which view shows
// the next ones. [WithPathGutters] numbers lines "path:N" instead of "N".
//
// The views of one screen take at most 56 KiB, so that with the commands'
// help they fit the 64 KiB the orchestrator keeps of a screen. A view past
// that is cut after the last line that fits, with a note naming the lines
// cut and the view command that shows them; a view opened after the
// budget ran out shows its header and that note only.
//
// Matching patterns is bounded: one line may cost at most 20,000,000 units
// of its bytes times the size of the pattern's compiled program, and the
// patterns of one screen or one command at most 2 seconds. A view command
// past the bound is refused, saying why; a view already open is marked
// "[SLOW: ...]" and shows the lines it showed last, which stay editable;
// search leaves such lines out and counts them.
//
// # What counts as shown
//
// An edit is checked against the lines the views showed the agent, not
// against what any drawing of the screen found. [Editor.Screen] counts as
// shown: call it for the screen that goes back with the editor's own
// command, or for one the front end shows (unfold serve sends every
// screen with every response; the agent loop's requests carry the
// screens, and it counts them as shown when it sends one).
// [Editor.Preview] draws the same screen
// without counting it, and leaves the views as they were: the
// orchestrator draws previews for prompt sections, and unfold mcp for its
// tool descriptions, screen resources and their poller, none of which
// the model may have seen. A view whose file is gone is removed only
// after a screen counted as shown showed it. The view, next_match and
// prev_match commands count what they found as shown, and an edit counts
// the lines it wrote.
//
// At most five views are kept: opening a sixth closes the oldest, and the
// response says so. A view whose file is gone shows "[ERROR: file not
// found]", one whose start pattern no longer matches "[BROKEN: patterns not
// found]" (a view by lines whose first line is past the end of the file
// says that); either is shown once, then removed. Files with a NUL byte in
// their first 8 KB are binary and refused. Lines longer than 1,000 bytes
// are cut on the screen with a note of how many bytes were left out, but
// in a narrow view: a view by lines of at most 10 lines, both ends given
// (view f 7-7), shows each line whole, up to 48 KB. An edit of a line
// that the view holding it cut is refused, naming the line and the
// narrow view that shows it whole (or, past 48 KB, saying that no view
// does), since it would replace bytes never shown; when that narrow view
// is open but the views before it left the screen no room for its lines,
// the refusal names a view to close instead. An
// empty file has one line, empty: it can be viewed, and edited by
// replacing that line.
//
// view on a directory answers with its files and directories two levels
// deep, sorted, directories ending in a slash; hidden entries,
// node_modules and what .gitignore files leave out are not listed, and the
// response says how many were left out. A listing reads each directory
// 1,024 entries at a time, keeps only the entries it can show, reads at
// most 100,000 entries of one directory (saying when there are more), and
// stops when the command is interrupted.
//
// # Edits
//
// An edit replaces whole lines, and only lines one view shows. Before
// writing, the lines the view last showed are compared with the file: if
// any differ (the file changed since the screen), the edit is refused, the
// response lists the expected and actual lines, and the file is not
// touched. New lines end like the last line they replace (LF, CRLF, or CR
// in a file whose lines end in a lone CR); every byte outside the edited
// lines is kept, tabs and a missing final newline included. When an edit
// changes a view's first or last line, that boundary's pattern becomes the
// new line's literal text (escaped), so the view keeps following it. An
// edit with no view of the file answers with the recovery steps of the
// help-system design, naming the view command; errors go in responses,
// never on the screen.
//
// undo <file> puts back the bytes the file had before the editor's last
// edit of it; again, the edit before that, up to 20 per file. The earlier
// contents are kept in memory, at most [DefaultMaxUndo] bytes over all
// files ([WithMaxUndo]); the oldest go first. Undo is refused, and the
// file not touched, when the file changed since the editor wrote it.
//
// # Encodings
//
// The editor works on text in UTF-8 and writes each file back in its own
// encoding. It decides a file's encoding in this order: a byte order mark
// (UTF-8, UTF-16LE, UTF-16BE), kept on write; valid UTF-8; an encoding the
// file declares where its format puts a declaration (a "coding: cp1251"
// comment on line 1 or 2, as Python's PEP 263 and Emacs write it; an XML
// declaration opening the file, <?xml ... encoding="..."?>; an HTML
// <meta charset> in the first 1 KB), never UTF-16 or UTF-32; the fallback
// given with [WithFallbackEncoding]. A name elsewhere (a string in code,
// "encoding: x" in YAML) is not a declaration. Encodings are those of
// golang.org/x/text/encoding, by IANA or WHATWG name. A view's header names
// an encoding that is not UTF-8 ("[windows-1251]"). An edit whose new text
// has a character the encoding lacks is refused, and so is an edit of a
// file whose bytes the encoding would not give back unchanged; a file is
// never written in two encodings. A file that is not UTF-8 and whose
// encoding is none of these is shown with U+FFFD for the bytes that are
// not UTF-8 ("[unknown 8-bit encoding]"), and an edit of it may add ASCII
// only. UTF-16 without a byte order mark is taken for binary.
//
// # Writing files
//
// A file whose mode has no write bit (0444) is not written by edit or
// undo, even by root, who could: the refusal names the mode, says nothing
// was written, and asks that the user, whose protection it is, make the
// file writable if it must change. A refused undo keeps the file's undo
// history.
//
// The file an edit writes is found once: every symbolic link on its path
// is followed inside the root (an edit through a link changes the link's
// target and the link stays a link; a link that leads outside the root is
// refused), and the file is opened once; it is read and checked through
// that open file. A file with one hard link whose owner the editor can
// give a new file is then written to a temporary file in its directory,
// given its owner and mode, and renamed over it after checking that the
// path still holds the file that was read, so a failed write leaves it
// intact; the temporary file also gets the file's extended attributes
// (user.* tags, POSIX ACLs, labels), and loses any its directory's default
// ACL gave it, and its name repeats at most 200 bytes of the file's. Any
// other file (more than one hard link, an owner or an extended attribute
// the editor cannot give, a directory the editor may not make a file in,
// or a file a rename cannot replace, such as a mount point) is written in
// place through the open file, and a failed write puts the old bytes
// back. Owner, mode, extended attributes (on Linux and macOS) and hard
// links are kept either way, but for attributes the editor's user cannot
// see: a user who is not root does not see trusted.* attributes, so a
// rename drops them. A temporary file that cannot be removed (a directory
// with the append-only attribute lets the rename and the removal fail) is
// emptied, and the response names it. Right before
// the rename, or the write in place, the open file's size, modification
// time and change time are compared with those it had when it was read:
// when another program wrote to it meanwhile, the edit (or undo) is
// refused and nothing is written, so no one else's bytes are lost.
//
// # Search and create
//
// search lists "path:line: text" for every line matching the pattern in the
// files matching the glob, sorted by path and line, at most 100 lines (the
// response says how many more), then how many files it read and what it
// skipped. Globs are those of github.com/bmatcuk/doublestar/v4: * and ?
// stay inside one path segment, ** spans directories, {a,b} gives
// alternatives; a glob without a slash matches file names at any depth
// (*.go is every Go file). Binary files are skipped, and so are .git and
// node_modules folders and what .gitignore files (the root's and nested
// ones) leave out, unless the glob names such a folder. On a [rootfs.FS] on
// Linux, search walks the tree through directory handles and reads each
// file with one open, so it runs about as fast as grep -rn (see
// bench/RESULTS.md). create refuses a file that exists, pointing to view
// and edit instead, and makes missing parent directories; it follows the
// symbolic links among the directories that exist, and the write check
// ([Editor.SetWriteCheck]) is asked about the file they lead to; create with no
// content makes an empty file. A path through a file ("a.txt/b.txt") is
// refused naming the file, and a symbolic link to nothing saying so.
//
// # Limits
//
// Only regular files are read or written: a FIFO, socket or device is
// refused with a message naming what it is, before it is opened and
// without blocking on it (search counts it as skipped). A search goes down
// 255 directories at most: a directory 256 levels deep is skipped, and
// the response counts it as such. Files larger than
// [DefaultMaxFileSize] ([WithMaxFileSize]) are refused, and so are edit
// and create content past it and edits that would make a file larger.
// A search looks at most at [DefaultMaxFiles] files and lists at most
// [DefaultMaxMatches] lines; a directory listing shows at most 500
// entries and reads at most 100,000 of one directory.
//
// # Confinement
//
// Every path is resolved inside the project root. [New] reaches the files
// through [rootfs.FS], an afero filesystem over an [os.Root], so "..", absolute
// paths outside the root, sibling directories such as ../root-evil, and
// symbolic links leading out are all refused with a message saying so.
// [NewFs] runs the editor over any afero filesystem (tests use an in-memory
// one); the editor itself refuses ".." and absolute paths there too.
//
// # Registering
//
// The editor is an [envs.Env], [envs.Closer], [envs.Summarizer] and an
// orchestrator.Previewer named [Name]; its help usage is recorded in the
// session given to [New]:
//
//	ed, err := editor.New(projectDir, sess)
//	if err != nil {
//		return err
//	}
//	err = orch.Register(editor.Name, ed)
package editor
