// The sign-in page's copy button: puts the `ssh-keygen -Y sign` command on the clipboard.
(function () {
  "use strict";
  const button = document.getElementById("copy-command");
  const status = document.getElementById("copy-status");
  if (!button) return;

  function copyBySelection(text) {
    // Where the Clipboard API is missing (a page served over plain http from another host).
    const scratch = document.createElement("textarea");
    scratch.value = text;
    scratch.setAttribute("readonly", "");
    scratch.style.position = "fixed";
    scratch.style.opacity = "0";
    document.body.append(scratch);
    scratch.select();
    const copied = document.execCommand("copy");
    scratch.remove();
    return copied;
  }

  button.addEventListener("click", async () => {
    const text = document.getElementById(button.dataset.copies).textContent.trim();
    let copied = false;
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        copied = true;
      } catch (error) {
        copied = copyBySelection(text);
      }
    } else {
      copied = copyBySelection(text);
    }
    status.textContent = copied ? "Copied: paste it into a terminal." : "Could not copy: select the command and copy it.";
  });
})();
