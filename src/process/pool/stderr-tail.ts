/**
 * The end of what a package's process writes to its stderr, read by the host as it comes and never
 * shown anywhere: a tool's printing is captured before it gets there, and what gets past that (a
 * descriptor the tool reopened) is kept only as this tail. Node and V8 write there as a process
 * dies: V8 says when it has run out of heap, then aborts the process, and that is how the host
 * tells such an end from a crash. A tool that forges those words relabels only its own crash.
 */
import type { Socket } from 'node:net';

/** How much of the end the host keeps. */
const TAIL_CHARS = 4096;
/** What V8 prints to stderr when it runs out of heap, before it aborts the process. */
const HEAP_OUT_OF_MEMORY = 'JavaScript heap out of memory';

export class StderrTail {
  readonly stream: Socket;
  #text = '';

  /** Reads `stream` to its end; never throws. */
  constructor(stream: Socket) {
    this.stream = stream;
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      this.#text = (this.#text + chunk).slice(-TAIL_CHARS);
    });
    stream.on('error', () => {});
  }

  /** The last characters written (an MCP server's error text). */
  get text(): string {
    return this.#text;
  }

  /** Whether the process said, last, that it ran out of heap. */
  get ranOutOfHeap(): boolean {
    return this.#text.includes(HEAP_OUT_OF_MEMORY);
  }
}
