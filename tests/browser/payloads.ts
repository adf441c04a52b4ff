// XSS payloads for the browser tests and the check that what was rendered from them is inert.
import type { Page } from 'playwright-core';

export const PAYLOADS = [
  '<script>alert("script");window.__pwned=1</script>',
  '<img src=x onerror="alert(\'onerror\');window.__pwned=1">',
  '<svg onload="alert(\'svg\')"><circle r="5"/></svg>',
  '<svg><script>alert("svg-script")</script></svg>',
  '[md-js](javascript:alert("md-js"))',
  '[md-js-entity](&#106;avascript:alert("md-entity"))',
  '<a href="javascript:alert(\'a-js\')">a-js</a>',
  '<a href="JaVaScRiPt:alert(\'case\')">case</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(\'entity\')">entity</a>',
  '<a href="&#x6A;avascript&#x3A;alert(\'hex-entity\')">hex-entity</a>',
  '<a href="jav&#x09;ascript:alert(\'tab\')">tab</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgnZGF0YScpPC9zY3JpcHQ+">data-link</a>',
  '[md-data](data:text/html,<script>alert(1)</script>)',
  '<a href="vbscript:msgbox(\'vb\')">vbscript</a>',
  '![img-js](javascript:alert("img"))',
  '<iframe src="javascript:alert(\'iframe\')"></iframe>',
  '<iframe srcdoc="<script>parent.alert(\'srcdoc\')</script>"></iframe>',
  '<object data="javascript:alert(\'object\')"></object><embed src="javascript:alert(\'embed\')">',
  '<form action="javascript:alert(\'form\')"><button id="xss-button">go</button></form>',
  '<details open ontoggle="alert(\'toggle\')">details</details>',
  '<div style="position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:99999;background:red" class="overlay-attack">overlay</div>',
  '<style>body{display:none}</style>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(\'meta\')">',
  '<math><mtext><table><mglyph><style><img src=x onerror="alert(\'mxss\')"></style></mglyph></table></mtext></math>',
  '<a href="#" onclick="alert(\'onclick\')" id="xss-click">click me</a>',
  '$\\href{javascript:alert("katex")}{katex-link}$',
  '```mermaid\ngraph TD\n  A["<img src=x onerror=alert(\'mermaid\')>"] --> B\n  click A call alert("mermaid-click")\n```',
  '```mermaid\n%%{init: {"securityLevel": "loose", "htmlLabels": true}}%%\ngraph TD\n  C["<img src=x onerror=alert(\'mermaid-init\')>"] --> D\n```',
].join('\n\n');

/** Inspects rendered content under `selector` and lists anything that is not inert. */
export async function inertProblems(page: Page, selector: string): Promise<string[]> {
  return page.evaluate(`(() => {
    const problems = [];
    const roots = [...document.querySelectorAll(${JSON.stringify(selector)})];
    if (roots.length === 0) return ['no element matches ${selector}'];
    for (const root of roots) {
      for (const el of [root, ...root.querySelectorAll('*')]) {
        const tag = el.tagName.toLowerCase();
        if (['script', 'iframe', 'object', 'embed', 'form', 'meta', 'base', 'link', 'frame'].includes(tag))
          problems.push('element ' + tag);
        if (tag === 'style' && !el.closest('figure.mermaid')) problems.push('element style');
        for (const attr of el.attributes) {
          const name = attr.name.toLowerCase();
          if (name.startsWith('on')) problems.push(tag + ' has ' + name);
          if (name === 'srcdoc') problems.push(tag + ' has srcdoc');
          if (name === 'style' && root.contains(el) && !el.closest('.katex, figure.mermaid'))
            problems.push(tag + ' has a style attribute');
          if (['href', 'src', 'xlink:href', 'action', 'formaction', 'data'].includes(name)) {
            const url = new URL(attr.value, document.baseURI);
            if (!['http:', 'https:', 'mailto:'].includes(url.protocol)) problems.push(tag + ' ' + name + '=' + attr.value);
          }
        }
        const style = getComputedStyle(el);
        if (style.position === 'fixed' && !el.closest('.overlay, #toasts')) problems.push(tag + ' is position:fixed');
      }
    }
    if (getComputedStyle(document.body).display === 'none') problems.push('body hidden');
    if (window.__pwned) problems.push('marker set');
    return problems;
  })()`);
}
