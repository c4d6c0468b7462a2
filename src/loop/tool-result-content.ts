/**
 * A call's content as the Messages API takes it inside a `tool_result`: text and image blocks as they
 * are, and a text stand-in for each block the API has no place for (audio, embedded resources,
 * resource links), saying what was left out. Every image is checked again here, since a loop host or
 * a loop tool need not be toolhost's: one image the API would refuse fails the whole request, so
 * such a result is sent as an error the model can react to instead.
 */
import { imageProblem } from '../boundary/media.js';
import type { ImageContentBlock, TextContentBlock, ToolContentBlock } from '../boundary/tool-contract.js';

/** What a `tool_result` may hold of a call's content. */
export type ApiToolContent = TextContentBlock | ImageContentBlock;

export type ApiContentCheck = { ok: true; content: ApiToolContent[] } | { ok: false; message: string };

/** The content for the API, or why it can't be sent. */
export function toApiContent(content: readonly ToolContentBlock[]): ApiContentCheck {
  const sent: ApiToolContent[] = [];
  for (const block of content) {
    if (block.type === 'image') {
      const problem = imageProblem(block.source.media_type, block.source.data);
      if (problem !== undefined) {
        return { ok: false, message: `TOOL_BAD_RESULT: the tool's result was not sent: ${problem}` };
      }
      sent.push(block);
    } else if (block.type === 'text') {
      sent.push(block);
    } else {
      sent.push({ type: 'text', text: standIn(block) });
    }
  }
  return { ok: true, content: sent };
}

/** The text sent in place of a block the Messages API has no block for. */
export function standIn(block: Exclude<ToolContentBlock, ApiToolContent>): string {
  switch (block.type) {
    case 'audio':
      return `[audio left out: ${block.source.media_type}, ${decodedBytes(block.source.data)} bytes; the Messages API takes no audio in a tool result]`;
    case 'resource': {
      const { resource } = block;
      const mime = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
      if ('text' in resource) return `[resource ${resource.uri}${mime}]\n${resource.text}`;
      return `[resource left out: ${resource.uri}${mime}, ${decodedBytes(resource.blob)} bytes of binary data; the Messages API takes no embedded binary resource]`;
    }
    case 'resource_link': {
      const parts = [block.mimeType, block.size === undefined ? undefined : `${block.size} bytes`].filter(
        (part) => part !== undefined,
      );
      const about = parts.length === 0 ? '' : ` (${parts.join(', ')})`;
      const title = block.title === undefined ? '' : ` "${block.title}"`;
      const description = block.description === undefined ? '' : `: ${block.description}`;
      return `[resource link: ${block.name}${title} <${block.uri}>${about}${description}; its contents were not fetched]`;
    }
  }
}

/** How many bytes strict base64 text decodes to. */
function decodedBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}
