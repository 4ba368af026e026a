// Package refagent is the deterministic reference ACP agent that the rest of
// acpkit tests against (binary: acpkit.dev/conformance/cmd/refagent). It
// speaks protocol version 1 over stdin/stdout, logs to stderr (log/slog
// text, component=refagent), and does exactly what its flags and the words
// of each prompt ask — including every misbehaviour real runtimes show.
//
// It is written with the SDK's agent side: an [acpkit.dev/acpsdk.AgentSide]
// dispatches every request to typed methods (gen.Agent and the optional
// session handlers), and its [acpkit.dev/acpsdk.Middleware] adds the
// misbehaviours the flags ask for — answers given before params are
// decoded (unadvertised methods, --unknown-method-code), raw results
// (--malformed-capabilities), and lines that must follow a response
// (--chatty, --late-updates, --load-replay-after-response, the word
// "after"). What no typed value can express — a
// malformed capability, a line that is not JSON, a line over the bound, an
// update for another session — is written raw on the same connection.
//
// # Default behaviour
//
// initialize answers the requested version (1), with agentInfo
// {name: "acpkit-refagent", version: "1.0.0"}, no auth methods (unless
// --auth-methods) and no optional capability. session/new returns ids "sess-1", "sess-2", … (the
// first unused, also counting --state-dir). A prompt with no content word
// streams two agent messages in several agent_message_chunk updates, each
// message with its own messageId ("<sid>-t<turn>-m1": "Hello", ", ",
// "from the reference agent."; "<sid>-t<turn>-m2": "You said: ",
// <prompt text>) and ends with end_turn. A prompt for an unknown session id
// is error -32002. Unknown methods, and methods whose capability is not
// advertised, get -32601 (before their params are looked at); bad params
// get -32602 naming the failing JSON path; unknown notifications are
// ignored; a line that is not JSON gets -32700 with "id": null. When stdin
// closes, the process cancels its running turns, answers what it had read
// (for at most a second) and exits 0; SIGTERM has its default effect.
//
// # Prompt words
//
// Words are whitespace-separated tokens of the prompt text (surrounding
// punctuation ignored); other text is ignored. The --words flag applies
// words to every prompt (and rejects unknown ones). The turn plays its
// words in this fixed order:
//
//	thought               an agent_thought_chunk
//	plan                  a plan with two entries
//	exit=CODE             after the updates so far (at least one chunk), exit
//	                      the process with status CODE, mid-turn
//	garbage               write the line "refagent: this line is not JSON"
//	oversize              write a valid session/update line of
//	                      --oversize-bytes bytes (default 10 MiB + 1: over
//	                      the SDK's default bound)
//	foreign               an agent_message_chunk for session id
//	                      "refagent-foreign-session"
//	unknown-update        an update with sessionUpdate "refagent_custom_update"
//	malformed-update      a tool_call without its required toolCallId (a
//	                      known variant that fails to decode)
//	null-id-update        an agent_message_chunk sent as a session/update
//	                      carrying "id": null
//	tool-name-wrong-type  tool call "named-1" (other) whose vendor "name" is
//	                      the number 42, completed by an update doing the same
//	tools                 tool calls "read-1" (read), "edit-1" (edit) going
//	                      pending → in_progress → completed, and "exec-1"
//	                      (execute) going pending → in_progress → failed;
//	                      then, only if the client offered them,
//	                      fs/read_text_file of <cwd>/README.md and
//	                      terminal/create of "ls", each outcome reported in
//	                      a chunk
//	permission            tool call "perm-1" (delete), then
//	                      session/request_permission offering allow_once
//	                      "allow" and reject_once "reject"; the tool call
//	                      completes only if an allow option was selected, and
//	                      a message chunk reports the outcome
//	permission-allow-only the same, offering only allow_once "allow" and
//	                      allow_always "allow-always"
//	permission=KIND       the permission word for a tool call of kind KIND
//	                      ("Use a KIND tool"), e.g. permission=read
//	write                 tool call "write-1" (edit) "Write
//	                      refagent-note.txt", asking permission as the
//	                      permission word does; only when an allow option
//	                      is selected does it write the file
//	                      refagent-note.txt in the session's directory, so
//	                      a refusal's side effect is visibly absent
//	elicit                elicitation/create (form mode); a chunk reports the
//	                      answer or error
//	call-unknown          call the client method "refagent/unknown_method";
//	                      a chunk reports the error
//	image                 an agent_message_chunk with image content
//	text                  the two default messages (implied when no other
//	                      content word — thought, plan, tools, image — is
//	                      given)
//	full                  thought, plan, tools and text together
//	slow                  after the above, keep reporting progress every
//	                      100ms until session/cancel (stop reason: the
//	                      --cancel-stop-reason, default cancelled) or
//	                      --slow-for passes (end_turn)
//	slow-ignore-cancel    the same but session/cancel is ignored: the turn
//	                      ends with end_turn after --slow-for
//	usage                 a usage_update, and the prompt result carries
//	                      _meta.quota.token_count {input_tokens: 120,
//	                      output_tokens: 34}
//	stop=REASON           end with stopReason REASON — any string, also one
//	                      the schema does not know (stop=paused)
//	after                 after the prompt response, a session_info_update
//	error=CODE            answer the prompt with JSON-RPC error CODE
//	                      (-32000 "authentication required", 400–599
//	                      "model backend unavailable")
//	error-data            with error=CODE or --prompt-error, the error's
//	                      data carries the cause, as Qwen Code's does:
//	                      {"details":"CODE Incorrect API key provided"}
//
// A session/cancel during a turn without "slow" ends it with the cancel
// stop reason as well.
//
// # Flags
//
// Handshake:
//
//	--agent-name S, --agent-version S   agentInfo fields
//	--no-agent-info                     omit agentInfo
//	--protocol-version N                answer initialize with N (e.g. 2)
//	--echo-protocol-version             answer initialize with whatever
//	                                    version was requested, even 65535
//	--fail-initialize CODE              answer initialize with error CODE
//	--malformed-capabilities            advertise "loadSession": "yes" and
//	                                    "sessionCapabilities": {"resume": true}
//
// Capabilities (advertised and served):
//
//	--load-session    loadSession: true; session/load replays every
//	                  exchange as user_message_chunk + agent_message_chunk
//	                  (messageIds "<sid>-u<n>", "<sid>-a<n>"), then responds
//	--resume          sessionCapabilities.resume; session/resume responds
//	                  without replaying
//	--close           sessionCapabilities.close; session/close forgets the
//	                  session (an unknown id is -32002)
//	--delete          sessionCapabilities.delete; session/delete removes it
//	                  (an unknown id succeeds)
//	--mcp-http        mcpCapabilities.http: true
//	--list            sessionCapabilities.list; session/list pages through
//	                  the sessions (memory and --state-dir), oldest first,
//	                  --list-page-size (default 10) at a time, honouring
//	                  its cwd filter; the cursor is "from-<index>"
//	--modes           session/new offers modes "ask" (current) and "code";
//	                  session/set_mode switches to an offered one and sends
//	                  current_mode_update, an unknown id is -32602
//	--prompt-image, --prompt-audio, --prompt-embedded-context
//	                  promptCapabilities image, audio, embeddedContext:
//	                  prompts may hold those blocks; without the flag a
//	                  prompt holding one is -32602 (text and resource_link
//	                  are always served)
//	--config-options  session/new offers the select option "effort"
//	                  (thought_level: low, high); session/set_config_option
//	                  sets an offered value and answers every option, an
//	                  unknown option or value is -32602
//
// A method whose capability is not advertised is answered like an unknown
// method.
//
// Authentication:
//
//	--auth-methods ID,ID      advertise these auth methods (type agent)
//	                          and serve authenticate: an advertised id
//	                          succeeds, any other is -32602
//	--require-auth            answer session/new, load and resume with
//	                          -32000 until authenticate succeeded
//	--accept-unknown-auth     authenticate succeeds for any method id
//	--fail-authenticate CODE  authenticate with an advertised id answers
//	                          error CODE
//
// Sessions and turns:
//
//	--state-dir DIR             keep conversations in DIR/<id>.json so a
//	                            later process can load or resume them
//	--record-mcp FILE           append one JSON line per session/new, load
//	                            and resume: {"method", "sessionId", "cwd",
//	                            "mcpServers" (exactly as received)}; see
//	                            [Record]
//	--fail-new-session CODE     answer session/new with error CODE (-32000:
//	                            "authentication required")
//	--accept-unknown-session    serve prompts for ids it never created
//	--chatty                    before the session/new response send the
//	                            vendor notification "_refagent/status" (no
//	                            session id); right after it an
//	                            available_commands_update
//	--words "W …"               prompt words for every prompt
//	--slow-for D                bound of a slow turn (default 30s)
//	--cancel-stop-reason S      stop reason of a cancelled turn (default
//	                            cancelled; end_turn mimics runtimes that
//	                            ignore the spec)
//	--cancelled-permission-error  fail a turn with -32603 when its
//	                            permission request is answered cancelled
//	                            (an uncaught cancellation)
//	--sticky-cancel             remember a session/cancel sent while no
//	                            turn runs, and cancel the session's next
//	                            turn with it
//	--stuck-after-cancel        after a turn ended cancelled, answer every
//	                            prompt of its session with -32603
//	--cancel-after-refusal      end a turn whose permission request was
//	                            answered with a reject option with stop
//	                            reason cancelled, as codex-acp 2.6.0 does
//	--stop-at-refusal           end a turn with end_turn right at a
//	                            permission request answered with a reject
//	                            option, sending nothing more, as Copilot
//	                            CLI, OpenCode and Qwen Code do
//	--late-updates              send the last text chunk of each turn after
//	                            the prompt response
//	--prompt-error CODE         answer every prompt with error CODE
//	--oversize-bytes N          length of the oversize word's line
//	--load-replay-after-response  respond to session/load, then replay
//	--resume-replays            replay on session/resume
//	--fail-close, --fail-delete answer those methods with -32603
//	--close-keeps-session       session/close succeeds but the session
//	                            keeps serving prompts
//	--delete-strict             session/delete of an unknown id is -32002
//	--list-page-size N          sessions per session/list page
//	--list-cursor-loop          every page names nextCursor "from-0": the
//	                            paging never ends
//	--list-omit-newest          session/list leaves out the newest session
//	--list-ignore-cwd           session/list ignores its cwd filter
//	--mode-ids-url              mode ids are URLs, as Copilot CLI's are
//	--set-mode-error            session/set_mode to an offered mode is -32603
//	--set-mode-accepts-unknown  session/set_mode to any id succeeds
//	--silent-set-mode           no current_mode_update after set_mode
//	--mode-update-as-config     confirm set_mode with a config_option_update
//	                            of a "mode" option instead, as
//	                            claude-agent-acp and codex-acp do
//	--set-config-stale          session/set_config_option answers the old
//	                            value
//	--set-config-accepts-unknown  unknown options and values succeed
//
// Prompt content and client capabilities:
//
//	--refuse-resource-link        a prompt holding a resource_link is -32602
//	--refuse-advertised-content   a prompt holding an image, audio or
//	                              resource block is -32602, advertised or not
//	--accept-unadvertised-content serve those blocks unadvertised too
//	--ignore-client-capabilities  the tools word calls fs/read_text_file
//	                              and terminal/create even when the client
//	                              did not offer them
//
// Protocol and process faults:
//
//	--log-env NAME              log NAME's value to stderr at start, as a
//	                            leaky agent does (repeatable)
//	--reject-meta               answer a request whose params carry _meta
//	                            with -32602
//	--reject-unknown-members    answer a request whose params carry a
//	                            member its params type does not define
//	                            with -32602 (methods with variant members
//	                            excepted)
//	--unknown-method-code CODE  answer unknown methods with CODE, not -32601
//	--answer-notifications      answer unknown notifications with an error
//	                            response (id null)
//	--die-on-garbage            exit with status 3 on a line that is not JSON
//	--drop-cancelled-requests   never answer a slow prompt that
//	                            $/cancel_request cancelled (by default it
//	                            ends with the cancel stop reason)
//	--ignore-stdin-close        keep running after stdin closes (until
//	                            SIGINT, SIGTERM or SIGKILL)
//	--ignore-sigterm            ignore SIGTERM
//	--descendant group|detached at start, fork a copy of itself that only
//	                            sleeps for --descendant-for (default 60s),
//	                            holding stdout open after the agent exits; in
//	                            the agent's process group or in its own
//	--descendant-pidfile FILE   write the descendant's pid there (it is also
//	                            logged as descendant_pid)
//
// Network (acpkit.dev/acpsdk/acpnet, see [Listen]):
//
//	--listen ADDR               serve on ADDR (host:port; 127.0.0.1:0 picks a
//	                            free port; no host means 127.0.0.1, every
//	                            interface needs 0.0.0.0) instead of stdio,
//	                            one agent per connection, until SIGINT or
//	                            SIGTERM; the first line on stdout is
//	                            "listening on URL"
//	--transport http|ws|tcp     Streamable HTTP and WebSocket on /acp (the
//	                            URL printed is http:// or ws://), or
//	                            newline-delimited JSON over TCP (tcp://);
//	                            default http
package refagent
