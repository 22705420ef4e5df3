"""Writes configs/<mechanism>.jsonc: one run per mechanism (run id heldout-<mechanism>) and the clean control.

The fault positions are write ordinals of notes_agent (the n-th memory_write it executed); with
this benchmark and the scripted persona they are fixed: see README.md, "Write ordinals".
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAULTS = {
    "clean": ("none", ""),
    "ghost_ack": ("ghost_ack", "3,9,16,24,26"),
    "value_swap": ("value_swap", "3,9,11,21,25"),
    "dedupe_noop": ("dedupe_noop", "4,13,21,25,26"),
    "evict_archive": ("evict_archive", "6,8,15,18,21"),
    "search_skip": ("search_skip", "3,11,13,16,24"),
    "truncate_results": ("truncate_results", "4,6,15,18,26"),
    "reply_rewrite": ("reply_rewrite", "3,8,9,13,26"),
    "old_first": ("old_first", ""),
    "skip_delete": ("skip_delete", "22,23,27,28"),
    "clobber_merge": ("clobber_merge", "12:8,16:9,13:11,4:3,19:15"),
    "forget_overreach": ("forget_overreach", ""),
    "decoy_first": ("decoy_first", "3,6,11,13,16"),
}
TEMPLATE = """// {comment}
{{
  recordings: "/tmp/heldout-recordings",
  runs: [
    {{
      id: "heldout-{name}",
      benchmark: "../benchmark",
      persona: {{ driver: "scripted" }},
      agent: {{
        adapter: "http",
        port: "auto",
        url: "http://127.0.0.1:${{PORT}}/chat",
        body: {{ message: "{{message}}", session_id: "{{session}}" }},
        reply_path: "reply",
        timeout: 60,
        memory_files: ["memory/*.md"],
        llm: {{ upstream: "standin", port: "auto" }},
        process: {{
          command: ["/work/main/.venv/bin/python", "{agent}", "--port", "${{PORT}}", "--state", "${{STATE_DIR}}"],
          env: {{ LLM_URL: "${{LLM_URL}}", STATE_DIR: "${{STATE_DIR}}", FAULT: "{fault}", FAULT_AT: "{at}" }},
          health: {{ url: "http://127.0.0.1:${{PORT}}/health" }},
          ready_timeout: 30,
        }},
      }},
    }},
  ],
}}
"""
for name, (fault, at) in FAULTS.items():
    comment = ("Control: the notes agent with no fault." if name == "clean"
               else f"Mechanism {name}: FAULT={fault} FAULT_AT={at or '(all)'} (see README.md).")
    (HERE / "configs" / f"{name}.jsonc").write_text(
        TEMPLATE.format(comment=comment, name=name, fault=fault, at=at, agent=HERE / "agent" / "notes_agent.py"))
print("\n".join(sorted(p.name for p in (HERE / "configs").iterdir())))
