/**
 * The files `toolhost init` writes: a tool package with one typed tool and its selftest. The tool is
 * plain JavaScript that imports nothing, so `toolhost selftest` passes the moment it is written, with
 * no `npm install` and no network. Its types come from toolhost through JSDoc (`import('toolhost/tool')`),
 * which only an editor or `tsc` reads, once toolhost is installed in the package.
 *
 * The package does not depend on toolhost: toolhost is not on the npm registry, so a version range
 * would fail to install (or, should someone else take the name, install their code), and a path to
 * this installation (`file:/…`) breaks on every other machine. The package's README says how to add
 * it, the way toolhost itself was installed (a tarball or a git URL).
 */

/** The tool the template defines, for the hints `init` prints. */
export const TEMPLATE_TOOL = {
  name: 'count_words',
  file: 'tools/count-words.js',
  exampleArguments: '{"text": "the cat saw the dog"}',
} as const;

export interface TemplateFile {
  /** The path inside the package, with `/` separators. */
  path: string;
  content: string;
}

/**
 * The package's files, in the order they are written.
 * @example templateFiles({ packageName: 'weather-tools' })
 */
export function templateFiles(options: { packageName: string }): TemplateFile[] {
  return [
    { path: 'package.json', content: packageJson(options) },
    { path: 'jsconfig.json', content: JSCONFIG },
    { path: TEMPLATE_TOOL.file, content: TOOL },
    { path: 'README.md', content: readme(options.packageName) },
  ];
}

/** A package name npm accepts, made from a folder name. */
export function packageNameFor(folderName: string): string {
  const name = folderName
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '')
    .replace(/-+$/, '')
    .slice(0, 214);
  return name === '' ? 'my-tools' : name;
}

function packageJson(options: { packageName: string }): string {
  const manifest = {
    name: options.packageName,
    version: '0.1.0',
    description: 'Tools for LLM agents, hosted with toolhost.',
    type: 'module',
    private: true,
    scripts: {
      test: 'toolhost selftest .',
      typecheck: 'tsc -p jsconfig.json',
    },
    toolhost: { tools: [`./${TEMPLATE_TOOL.file}`] },
    devDependencies: {
      typescript: '^5.9.3',
    },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

// NodeNext resolution is what reads toolhost's `exports` map, where `toolhost/tool` lives.
const JSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      checkJs: true,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
    include: ['tools'],
  },
  null,
  2,
)}\n`;

const TOOL = `// @ts-check
// One tool: its declaration (name, description, parameterSchema), what it does (run) and how to
// check that it works (selftest). Rename it, change it, add more files to "toolhost.tools".

/**
 * defineTool types \`run\`'s arguments from \`parameterSchema\` (a misspelt \`args.txt\` is an error in
 * your editor); at run time it returns the object as it is, so this file needs nothing installed.
 * @type {typeof import('toolhost/tool').defineTool}
 */
const defineTool = (tool) => tool;

export default defineTool({
  name: '${TEMPLATE_TOOL.name}',
  description: 'Counts the words in a text. With unique: true, counts each distinct word once.',
  parameterSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text whose words to count' },
      unique: { type: 'boolean', description: 'Count each distinct word once (ignoring case)' },
    },
    required: ['text'],
    additionalProperties: false,
  },
  timeoutMs: 5000,

  // args were validated against parameterSchema before this runs.
  run({ text, unique = false }) {
    const count = countWords(text, unique);
    return \`\${count} \${count === 1 ? 'word' : 'words'}\`;
  },

  // Resolving passes, throwing fails. Side effects belong in ctx.tmpDir (removed afterwards).
  selftest() {
    const cases = /** @type {const} */ ([
      ['the cat saw the dog', false, 5],
      ['The cat saw the dog', true, 4],
      ['  spaced   out  ', false, 2],
      ['', false, 0],
    ]);
    for (const [text, unique, expected] of cases) {
      const actual = countWords(text, unique);
      if (actual !== expected) throw new Error(\`expected \${expected} words in \${JSON.stringify(text)}, got \${actual}\`);
    }
  },
});

/**
 * @param {string} text
 * @param {boolean} unique
 */
function countWords(text, unique) {
  const words = text.split(/\\s+/).filter((word) => word !== '');
  return unique ? new Set(words.map((word) => word.toLowerCase())).size : words.length;
}
`;

function readme(packageName: string): string {
  return `# ${packageName}

Tools for LLM agents, hosted with toolhost. Each module in \`tools/\` is one tool, and
\`package.json\` lists them under \`"toolhost": { "tools": [...] }\`.

## Try it

\`\`\`sh
npx --no toolhost selftest .   # every tool's selftest, in a temp dir
npx --no toolhost list .       # what a host offers, or why it leaves a tool out
npx --no toolhost call . ${TEMPLATE_TOOL.name} '${TEMPLATE_TOOL.exampleArguments}'
\`\`\`

These run the toolhost installed in this package (or a parent folder's, from there). toolhost is not
on the npm registry: add it as a devDependency the way you installed it, from its tarball or its git
repository:

\`\`\`sh
npm install --save-dev /path/to/toolhost-<version>.tgz
npm install --save-dev git+https://<host>/<owner>/toolhost.git
\`\`\`

## Types

\`${TEMPLATE_TOOL.file}\` is plain JavaScript and runs with nothing installed. With toolhost installed
here (above), your editor and \`npm run typecheck\` check \`run\`'s arguments against \`parameterSchema\`.
`;
}
