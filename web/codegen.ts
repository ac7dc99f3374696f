import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed documents for every graphql(`...`) call under src/, generated from the
// server's own schema files so the console can never drift from the API.
const config: CodegenConfig = {
  schema: '../graph/*.graphqls',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**/*'],
  ignoreNoDocuments: true,
  generates: {
    './src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Time: 'string' },
        skipTypename: false,
      },
    },
  },
};

export default config;
