package check

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
)

// WriteHTML writes r as one self-contained HTML page for a person: the
// verdict, the table of checks, the mandatory checks not graded with why,
// and each non-passing check's transcript as a two-column exchange —
// client on the left, agent on the right, each line with its time, notes
// across both. It loads nothing: the style is inline and it has no script
// (a transcript opens and closes with the page's own details elements;
// those of failed checks start open).
func WriteHTML(w io.Writer, r Report) error {
	r.Judge()
	page := htmlPage{Report: r, Summary: SummaryLine(r), Groups: r.NotGradedGroups()}
	page.Heading = fmt.Sprintf("acpcheck graded the %s %s", r.Role, r.PeerName())
	if r.Peer.Name == "" {
		page.Heading = "acpcheck graded " + r.PeerName()
	}
	page.ClientLabel, page.AgentLabel = "acpcheck (client)", "agent graded"
	if r.Role == RoleClient {
		page.ClientLabel, page.AgentLabel = "client graded", "acpcheck's scenario agent"
	}
	for _, res := range r.Results {
		row := htmlRow{Result: res, Label: Label(res), Class: rowClass(res)}
		page.Rows = append(page.Rows, row)
		if len(res.Transcript) == 0 || res.Status == StatusPass || res.Status == StatusSkip {
			continue
		}
		ex := htmlExchange{Result: res, Label: row.Label, Class: row.Class, Open: res.Status == StatusFail && !res.Known}
		for _, l := range res.Transcript {
			ex.Lines = append(ex.Lines, htmlLine{At: fmtAt(l.At), Side: side(l.Dir), Dir: string(l.Dir), Head: headline(l), Text: l.Text})
		}
		page.Exchanges = append(page.Exchanges, ex)
	}
	return htmlTemplate.Execute(w, page)
}

type htmlPage struct {
	Report
	Heading                 string
	Summary                 string
	Groups                  []NotGradedGroup
	Rows                    []htmlRow
	Exchanges               []htmlExchange
	ClientLabel, AgentLabel string
}

type htmlRow struct {
	Result
	Label, Class string
}

type htmlExchange struct {
	Result
	Label, Class string
	Open         bool
	Lines        []htmlLine
}

type htmlLine struct {
	At, Side, Dir, Head, Text string
}

// rowClass is the CSS class a result's row gets.
func rowClass(r Result) string {
	switch {
	case r.Known:
		return "known"
	case r.Fixed:
		return "fail"
	case r.Status == StatusFail && r.Tier == TierAdvisory:
		return "advisory"
	}
	return string(r.Status)
}

// side places a transcript line: the client's column, the agent's, or
// across both.
func side(d Direction) string {
	switch d {
	case DirSend, DirClientStdout, DirClientStderr:
		return "client"
	case DirRecv, DirStderr:
		return "agent"
	}
	return "note"
}

// headline says in a few words what a protocol line is: the method and id
// of a request, a notification's method (and update kind), an answer's id
// and whether it is an error; or what kind of line it is otherwise.
func headline(l Line) string {
	switch l.Dir {
	case DirStderr:
		return "stderr"
	case DirClientStdout:
		return "client stdout"
	case DirClientStderr:
		return "client stderr"
	case DirSend, DirRecv:
	default:
		return ""
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Update struct {
				Kind string `json:"sessionUpdate"`
			} `json:"update"`
		} `json:"params"`
		Error *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(l.Text), &m) != nil {
		if strings.HasSuffix(l.Text, " bytes in all)") {
			return "a long line (cut here)"
		}
		return "not JSON-RPC"
	}
	switch {
	case m.Method != "" && len(m.ID) > 0:
		return fmt.Sprintf("%s #%s", m.Method, m.ID)
	case m.Method == "session/update" && m.Params.Update.Kind != "":
		return "session/update " + m.Params.Update.Kind
	case m.Method != "":
		return m.Method
	case m.Error != nil:
		return fmt.Sprintf("error %d for #%s", m.Error.Code, m.ID)
	case len(m.ID) > 0:
		return fmt.Sprintf("answer #%s", m.ID)
	}
	return ""
}

func fmtAt(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

var htmlTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>acpcheck: {{.Verdict}} — {{.Role}} {{.PeerName}}</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem; padding: 0 1rem; color: #1d2125; }
h1 { font-size: 1.5rem; margin-bottom: .25rem; }
code, .text { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
.verdict { display: inline-block; padding: .2rem .7rem; border-radius: .3rem; font-weight: 700; letter-spacing: .04em; color: #fff; }
.verdict.OK { background: #1e7b34; } .verdict.FAILED { background: #b42318; } .verdict.INCOMPLETE { background: #9a6700; }
.summary { color: #444; margin: .5rem 0 1.5rem; }
table.checks { border-collapse: collapse; width: 100%; }
table.checks th, table.checks td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e3e6e8; vertical-align: top; }
table.checks th { background: #f4f6f8; }
tr.fail td.result { color: #b42318; font-weight: 700; } tr.pass td.result { color: #1e7b34; }
tr.known td.result, tr.advisory td.result { color: #9a6700; font-weight: 700; }
tr.skip td.result, tr.needs-model td.result, tr.needs-credential td.result { color: #6b7280; }
tr.fail { background: #fdf1f0; }
.pins { color: #6b7280; font-size: 12px; }
details.exchange { border: 1px solid #d0d5da; border-radius: .4rem; margin: 1rem 0; }
details.exchange > summary { cursor: pointer; padding: .5rem .8rem; background: #f4f6f8; font-weight: 600; }
details.exchange.fail > summary { background: #fdf1f0; }
.grid { display: grid; grid-template-columns: 6rem 1fr 1fr; }
.grid .colhead { font-weight: 700; padding: .4rem .6rem; border-bottom: 1px solid #d0d5da; }
.at { grid-column: 1; color: #6b7280; padding: .25rem .6rem; font-size: 12px; text-align: right; }
.msg { padding: .25rem .6rem; overflow-wrap: anywhere; border-top: 1px solid #f0f2f4; }
.msg.client { grid-column: 2; background: #f2f7ff; } .msg.agent { grid-column: 3; background: #f6fbf3; }
.msg.note { grid-column: 2 / span 2; color: #555; font-style: italic; }
.msg .head { font-weight: 600; font-size: 12px; color: #374151; }
.msg.client-stdout, .msg.client-stderr, .msg.stderr { opacity: .75; }
.notgraded li { margin: .2rem 0; }
</style>
</head>
<body>
<h1>{{.Heading}}</h1>
<p>Verdict: <span class="verdict {{.Verdict}}" id="verdict">{{.Verdict}}</span></p>
<p class="summary" id="summary">{{.Summary}}</p>
<p>Command: <code>{{range $i, $a := .Command}}{{if $i}} {{end}}{{$a}}{{end}}</code>{{if .Env}}<br>Environment set: <code>{{range .Env}}{{.}} {{end}}</code>{{end}}</p>
<table class="checks" id="checks">
<thead><tr><th>Check</th><th>Tier</th><th>Result</th><th>Reason</th></tr></thead>
<tbody>
{{range .Rows}}<tr class="{{.Class}}" data-check="{{.ID}}"><td><code>{{.ID}}</code><div class="pins">{{.Title}}</div></td><td>{{.Tier}}{{if .Gate}}<div class="pins">when {{.Gate}}</div>{{end}}</td><td class="result">{{.Label}}</td><td>{{.Reason}}</td></tr>
{{end}}</tbody>
</table>
{{if .Groups}}<h2>Mandatory checks not graded</h2>
<ul class="notgraded">{{range .Groups}}<li>{{.Status}} ({{len .IDs}}): {{range $i, $id := .IDs}}{{if $i}}, {{end}}<code>{{$id}}</code>{{end}} — {{.Reason}}</li>{{end}}</ul>{{end}}
{{if .Exchanges}}<h2>Transcripts of the checks that did not pass</h2>{{end}}
{{range .Exchanges}}<details class="exchange {{.Class}}" id="transcript-{{.ID}}"{{if .Open}} open{{end}}>
<summary><code>{{.ID}}</code>: {{.Label}} — {{.Reason}}</summary>
<div class="grid">
<div class="colhead at">time</div><div class="colhead">{{$.ClientLabel}}</div><div class="colhead">{{$.AgentLabel}}</div>
{{range .Lines}}<div class="at">{{.At}}</div><div class="msg {{.Side}} {{.Dir}}">{{if .Head}}<div class="head">{{.Head}}</div>{{end}}<div class="text">{{.Text}}</div></div>
{{end}}</div>
</details>
{{end}}</body>
</html>
`))
