// The conversation of one echo session: its items (bounded, oldest dropped first) and the
// client events that act on them (create, retrieve, delete, truncate), as a Realtime model
// answers them. Pure; events leave through the sinks RealtimeEcho gives it.
import type { Json, JsonObject } from "../../shared/realtime/session.ts";

/** Items kept for conversation.item.retrieve / delete; the oldest go first. */
export const MAX_ITEMS = 256;

const isObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

export interface ConversationSinks {
  emit(ev: JsonObject): void;
  error(code: string, message: string, cause: JsonObject | null, param?: string | null): void;
  id(prefix: string): string;
}

export class Conversation {
  readonly #s: ConversationSinks;
  readonly #items = new Map<string, JsonObject>();
  #lastItemId: string | null = null;

  constructor(s: ConversationSinks) {
    this.#s = s;
  }

  /** The newest item's id (the previous_item_id of the next one). */
  get lastItemId(): string | null {
    return this.#lastItemId;
  }

  /** The items, oldest first (they are never changed in place, so a copy of the list will do). */
  get items(): JsonObject[] {
    return [...this.#items.values()];
  }

  /** Takes over a kept conversation (a resumed call), replacing this one's items. */
  restore(items: readonly JsonObject[], lastItemId: string | null): void {
    this.#items.clear();
    for (const it of items.slice(-MAX_ITEMS)) this.#items.set(it.id as string, it);
    this.#lastItemId = lastItemId;
  }

  remember(item: JsonObject): void {
    const id = item.id as string;
    this.#items.delete(id);
    this.#items.set(id, item);
    if (this.#items.size > MAX_ITEMS) this.#items.delete(this.#items.keys().next().value!);
    this.#lastItemId = id;
  }

  /** The three events a new conversation item produces (beta and GA names). */
  announce(item: JsonObject, previous: string | null): void {
    this.remember(item);
    this.#s.emit({ type: "conversation.item.created", previous_item_id: previous, item });
    this.#s.emit({ type: "conversation.item.added", previous_item_id: previous, item });
    this.#s.emit({ type: "conversation.item.done", previous_item_id: previous, item });
  }

  create(ev: JsonObject): void {
    const { error } = this.#s;
    const given = ev.item;
    if (!isObject(given)) {
      error("missing_required_parameter", "conversation.item.create needs an `item` object", ev, "item");
      return;
    }
    const type = given.type ?? "message";
    if (type !== "message" && type !== "function_call" && type !== "function_call_output") {
      error("invalid_value", `item.type ${JSON.stringify(type)} is not supported`, ev, "item.type");
      return;
    }
    if (type === "message" && !Array.isArray(given.content)) {
      error("missing_required_parameter", "a message item needs a `content` array", ev, "item.content");
      return;
    }
    const id = str(given.id) ?? this.#s.id("item");
    if (id.length > 64) {
      error("invalid_value", "item.id may be at most 64 characters", ev, "item.id");
      return;
    }
    const item: JsonObject = { ...given, id, object: "realtime.item", type, status: "completed" };
    const prev = ev.previous_item_id;
    this.announce(item, typeof prev === "string" ? prev : this.#lastItemId);
  }

  /** conversation.item.retrieve, .delete and .truncate. */
  act(type: string, ev: JsonObject): void {
    const id = str(ev.item_id);
    const item = id === undefined ? undefined : this.#items.get(id);
    if (!item || id === undefined) {
      this.#s.error("item_not_found", `no conversation item ${JSON.stringify(id ?? null)}`, ev, "item_id");
      return;
    }
    if (type === "conversation.item.retrieve") this.#s.emit({ type: "conversation.item.retrieved", item });
    else if (type === "conversation.item.delete") {
      this.#items.delete(id);
      if (this.#lastItemId === id) this.#lastItemId = null;
      this.#s.emit({ type: "conversation.item.deleted", item_id: id });
    } else {
      this.#s.emit({
        type: "conversation.item.truncated",
        item_id: id,
        content_index: typeof ev.content_index === "number" ? ev.content_index : 0,
        audio_end_ms: typeof ev.audio_end_ms === "number" ? ev.audio_end_ms : 0,
      });
    }
  }

  /** The text the echo "model" says back: the last user text or transcript. */
  echoText(input: Json | undefined): string {
    const items = Array.isArray(input) ? input.filter(isObject) : [...this.#items.values()];
    for (let i = items.length - 1; i >= 0; i--) {
      const it = items[i]!;
      if (it.role !== "user" || !Array.isArray(it.content)) continue;
      for (const c of it.content) {
        if (!isObject(c)) continue;
        const t = str(c.text) ?? str(c.transcript);
        if (t) return t.slice(0, 4096);
      }
    }
    return "";
  }
}
