// Turns an MCP tools/call result into the text the model reads: structuredContent as JSON when the
// server gives it, else the text parts, with images, audio and resources summarised, capped like
// the results of built-in tools.
import { capText, RESULT_CAP_BYTES } from '../tools/cap.ts';

export interface McpToolOutput {
  content: string;
  isError: boolean;
}

type Part = Record<string, unknown> & { type?: unknown };

function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function describeResource(resource: Record<string, unknown>): string {
  const uri = typeof resource.uri === 'string' ? resource.uri : '(no uri)';
  const mime = typeof resource.mimeType === 'string' ? `, ${resource.mimeType}` : '';
  if (typeof resource.text === 'string')
    return `[resource ${uri}${mime}, ${resource.text.length} characters]`;
  if (typeof resource.blob === 'string')
    return `[resource ${uri}${mime}, ${base64Bytes(resource.blob)} bytes]`;
  return `[resource ${uri}${mime}]`;
}

/** One content part as a line of text for the model. */
export function describePart(part: Part): string {
  switch (part.type) {
    case 'text':
      return typeof part.text === 'string' ? part.text : '';
    case 'image':
    case 'audio':
      return `[${part.type}: ${typeof part.mimeType === 'string' ? part.mimeType : 'unknown type'}, ${base64Bytes(part.data)} bytes]`;
    case 'resource':
      return describeResource((part.resource ?? {}) as Record<string, unknown>);
    case 'resource_link': {
      const name = typeof part.name === 'string' ? ` "${part.name}"` : '';
      const description = typeof part.description === 'string' ? `: ${part.description}` : '';
      return `[resource link${name} ${String(part.uri)}${description}]`;
    }
    default:
      return `[${String(part.type)} content]`;
  }
}

/** Converts a CallToolResult (or a legacy `{toolResult}`) and caps it at `maxBytes`. */
export function toToolOutput(result: Record<string, unknown>, maxBytes = RESULT_CAP_BYTES): McpToolOutput {
  const isError = result.isError === true;
  const parts = Array.isArray(result.content) ? (result.content as Part[]) : [];
  const structured =
    result.structuredContent === undefined || result.structuredContent === null
      ? undefined
      : JSON.stringify(result.structuredContent);
  const partsText = parts.length > 0 ? parts.map(describePart).join('\n') : undefined;
  const legacy = 'toolResult' in result ? JSON.stringify(result.toolResult) : undefined;
  // An error's message is in its text parts; a success's data is best read from structuredContent.
  let text = (isError ? (partsText ?? structured) : (structured ?? partsText)) ?? legacy ?? '';
  if (isError && text.trim() === '') text = 'the tool reported an error without a message';
  if (!isError && text === '') text = '(the tool returned no content)';
  return { content: capText(text, maxBytes, 'the MCP tool result'), isError };
}
