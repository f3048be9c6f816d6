// Starts `bebopc lsp` (the language server built into bebopc) for .bop files.
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("bebop").get("server.path") || "bebopc";
  const serverOptions = {
    run: { command, args: ["lsp"] },
    debug: { command, args: ["lsp"] },
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "bebop" }],
    synchronize: {
      // Schemas and the configuration changed outside the editor.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/{*.bop,bebop.yml,bebop.yaml,bebop.json}"),
    },
  };
  client = new LanguageClient("bebop", "Bebop", serverOptions, clientOptions);
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
