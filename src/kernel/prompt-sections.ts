/**
 * Lines the system message carries besides the persona and the output rules
 * (issue 17 "Skills": the one-line-per-skill list). Each section is text
 * computed when a turn assembles its prompt; sections are joined in the
 * order of their ids (sorted), so the system message stays byte for byte the
 * same while they do (issue 19 "A stable prefix"), and they count toward
 * the turn's fixed token budget like the rules.
 */

/** One section: an owner (removed with it) and the text (empty: left out). */
interface Section {
  owner: string;
  text: () => string;
}

/** The registry of system-message sections. No IO. */
export class PromptSections {
  private readonly sections = new Map<string, Section>();

  /** Add or replace section `id` owned by `owner`; `text` is called on every turn and must not throw. */
  set(owner: string, id: string, text: () => string): void {
    this.sections.set(id, { owner, text });
  }

  /** Remove section `id`. */
  delete(id: string): void {
    this.sections.delete(id);
  }

  /** Remove every section `owner` added. */
  removeOwner(owner: string): void {
    for (const [id, s] of this.sections) if (s.owner === owner) this.sections.delete(id);
  }

  /** The sections' texts in id order, blank ones left out, joined by a blank line ('' when none). */
  text(): string {
    const out: string[] = [];
    for (const id of [...this.sections.keys()].sort()) {
      let t = '';
      try {
        t = this.sections.get(id)!.text().trim();
      } catch {
        t = '';
      }
      if (t) out.push(t);
    }
    return out.join('\n\n');
  }
}
