// Markdown → sanitised DOM, the one renderer for the editor preview, public pages, chat and search.
// Everything marked emits passes DOMPurify plus a URL-scheme allowlist; math and Mermaid are drawn
// afterwards from the sanitised text, loading their (large) libraries only when a page needs them.
import createDOMPurify from 'dompurify';
import { marked } from './markdown.ts';

/** Schemes a link may use; everything else (javascript:, data:, vbscript:, file:, blob: …) is dropped. */
const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
const IMAGE_SCHEMES = new Set(['http:', 'https:']);

/**
 * The URL as the browser will resolve it, when its scheme is allowed; null otherwise. The value is
 * already entity-decoded (it comes from a parsed attribute), and the URL parser strips the tabs and
 * newlines that `java&#9;script:` tricks rely on.
 */
export function safeUrl(value: string, kind: 'link' | 'image' = 'link'): string | null {
  let url: URL;
  try {
    url = new URL(value.trim(), document.baseURI);
  } catch {
    return null;
  }
  return (kind === 'image' ? IMAGE_SCHEMES : LINK_SCHEMES).has(url.protocol) ? url.href : null;
}

/**
 * The only classes rendered Markdown may carry: those the renderer itself gives (code highlighting,
 * math and diagram placeholders). Anything else a note writes (`<div class="overlay">`) would take
 * the app's own styles and could paint a fake dialog over the page, so it is dropped.
 */
const CONTENT_CLASS =
  /^(?:hljs(?:-[a-z_-]+)?|[a-z]+_|language-[a-z0-9+#._-]+|math|math-display|math-inline|mermaid-src)$/;

/** Keeps only the classes the renderer gives; set while Markdown (not a diagram's SVG) is sanitised. */
let filterClasses = false;

export function contentClasses(value: string): string {
  return value
    .split(/\s+/)
    .filter((name) => CONTENT_CLASS.test(name))
    .join(' ');
}

const purify = createDOMPurify(window);
const URL_ATTRS = ['href', 'src', 'xlink:href', 'action', 'formaction', 'poster', 'background', 'cite'];
purify.addHook('afterSanitizeAttributes', (node) => {
  if (filterClasses && node.hasAttribute('class')) {
    const kept = contentClasses(node.getAttribute('class') ?? '');
    if (kept) node.setAttribute('class', kept);
    else node.removeAttribute('class');
  }
  for (const attr of URL_ATTRS) {
    const value = node.getAttribute(attr);
    if (value === null) continue;
    const kind = attr === 'src' && node.tagName === 'IMG' ? 'image' : 'link';
    if ((attr === 'href' && node.tagName === 'A') || kind === 'image') {
      if (safeUrl(value, kind) === null) node.removeAttribute(attr);
    } else {
      node.removeAttribute(attr);
    }
  }
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    const href = new URL(node.getAttribute('href') ?? '', document.baseURI);
    if (href.origin !== location.origin) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  }
  if (node.tagName === 'IMG') {
    node.setAttribute('loading', 'lazy');
    node.setAttribute('referrerpolicy', 'no-referrer');
  }
});

const SANITIZE = {
  // Anything that can run script, load a frame, submit a form or paint over the page goes.
  FORBID_TAGS: [
    'style',
    'link',
    'meta',
    'base',
    'iframe',
    'frame',
    'frameset',
    'object',
    'embed',
    'form',
    'input',
    'button',
    'textarea',
    'select',
    'svg',
    'math',
    'template',
    // A dialog shown open is drawn over the page by the browser itself.
    'dialog',
  ],
  FORBID_ATTR: [
    'style',
    'srcset',
    'id',
    'name',
    'action',
    'formaction',
    'popover',
    'popovertarget',
    'popovertargetaction',
    'command',
    'commandfor',
  ],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: true,
};

/** Sanitises an HTML string into a fragment; the only way HTML reaches the page. */
export function sanitize(html: string): DocumentFragment {
  filterClasses = true;
  try {
    return purify.sanitize(html, { ...SANITIZE, RETURN_DOM_FRAGMENT: true });
  } finally {
    filterClasses = false;
  }
}

/** Renders Markdown into `target` (replacing its children) and then draws math and diagrams. */
export async function renderMarkdown(target: HTMLElement, source: string): Promise<void> {
  const html = marked.parse(source, { async: false });
  target.replaceChildren(sanitize(html));
  target.classList.add('markdown');
  await enhance(target);
}

/** Renders Markdown to a detached fragment without math or diagrams (chat tokens, snippets). */
export function markdownFragment(source: string): DocumentFragment {
  return sanitize(marked.parse(source, { async: false }));
}

let katexCss: Promise<void> | undefined;
function loadKatexCss(): Promise<void> {
  katexCss ??= new Promise((resolve) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = new URL('katex.css', import.meta.url).href;
    link.onload = link.onerror = () => resolve();
    document.head.append(link);
  });
  return katexCss;
}

let mermaidSeq = 0;

/** Draws math and Mermaid diagrams found in already sanitised content. */
export async function enhance(root: HTMLElement): Promise<void> {
  const maths = [...root.querySelectorAll<HTMLElement>('.math')];
  const diagrams = [...root.querySelectorAll<HTMLElement>('pre.mermaid-src')];
  const work: Promise<void>[] = [];
  if (maths.length > 0) {
    work.push(
      (async () => {
        const [{ default: katex }] = await Promise.all([import('katex'), loadKatexCss()]);
        for (const el of maths) {
          // trust:false keeps \href{javascript:…} and \htmlData out; KaTeX escapes the rest.
          katex.render(el.textContent ?? '', el, {
            displayMode: el.classList.contains('math-display'),
            throwOnError: false,
            trust: false,
            maxExpand: 1000,
          });
        }
      })(),
    );
  }
  if (diagrams.length > 0) {
    work.push(
      (async () => {
        const { default: mermaid } = await import('mermaid');
        const dark = document.documentElement.dataset['theme'] === 'dark';
        mermaid.initialize({
          startOnLoad: false,
          securityLevel: 'strict',
          theme: dark ? 'dark' : 'default',
          // Diagram text must not be able to restyle the page or lift these settings.
          secure: [
            'secure',
            'htmlLabels',
            'securityLevel',
            'startOnLoad',
            'maxTextSize',
            'themeCSS',
            'fontFamily',
            'theme',
          ],
          // SVG text labels: HTML labels need <foreignObject>, which the SVG sanitising below removes.
          htmlLabels: false,
        });
        for (const pre of diagrams) {
          const figure = document.createElement('figure');
          figure.className = 'mermaid';
          try {
            const { svg } = await mermaid.render(`mermaid-${++mermaidSeq}`, pre.textContent ?? '');
            figure.replaceChildren(
              purify.sanitize(svg, {
                USE_PROFILES: { svg: true, svgFilters: true },
                ADD_TAGS: ['style'],
                FORBID_TAGS: ['foreignObject', 'a', 'use', 'image'],
                RETURN_DOM_FRAGMENT: true,
              }),
            );
          } catch (error) {
            figure.classList.add('mermaid-error');
            figure.textContent = `Diagram error: ${error instanceof Error ? error.message : String(error)}`;
          }
          pre.replaceWith(figure);
        }
      })(),
    );
  }
  await Promise.all(work);
}
