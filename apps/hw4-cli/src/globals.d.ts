/** The package version, inlined at build time. */
declare const __HW4_CLI_VERSION__: string;
