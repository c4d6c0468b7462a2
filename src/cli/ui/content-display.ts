/**
 * One line for a content block that is not text, as the CLI shows it (`toolhost call`, `chat`): what
 * it is and how large, never its bytes.
 */
import type { TextContentBlock, ToolContentBlock } from '../../boundary/tool-contract.js';

/** `[image: image/png, 68 bytes]`, `[audio: audio/wav, 44 bytes]`, `[resource: file:///a.md (text/markdown), 12 characters]`, … */
export function describeBlock(block: Exclude<ToolContentBlock, TextContentBlock>): string {
  switch (block.type) {
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.source.media_type}, ${decodedBytes(block.source.data)} bytes]`;
    case 'resource': {
      const { resource } = block;
      const mime = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
      const size =
        'text' in resource ? `${resource.text.length} characters` : `${decodedBytes(resource.blob)} bytes`;
      return `[resource: ${resource.uri}${mime}, ${size}]`;
    }
    case 'resource_link': {
      const mime = block.mimeType === undefined ? '' : ` (${block.mimeType})`;
      return `[resource link: ${block.name} <${block.uri}>${mime}]`;
    }
  }
}

function decodedBytes(base64: string): number {
  const padding = base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0;
  return (base64.length / 4) * 3 - padding;
}
