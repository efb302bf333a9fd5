// Confirm dialogs for the forms that carry data-confirm: a progressive
// enhancement; without script the form still posts.
document.addEventListener("submit", function (ev) {
  var msg = ev.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) {
    ev.preventDefault();
  }
});
