// On a narrow screen the theme shows the book's table of contents (☰) and the page's
// own contents ("Contents") in drawers, <dialog> elements that stay open until the
// reader taps outside them. Following a link to a section of the page the reader is on
// then scrolls the page underneath, still covered by the drawer. Close the drawer once
// such a link has been followed, so the reader sees the section they asked for. (A link
// to another page needs nothing: the new page opens with its drawers closed.)
document.addEventListener("click", (event) => {
  const link = event.target.closest("dialog[open] a[href]");
  if (!link || link.pathname !== window.location.pathname || !link.hash) return;
  const drawer = link.closest("dialog");
  // After the browser has followed the link: closing moves the drawer's content back
  // into the hidden sidebar, and the theme then returns focus to the toggle button.
  window.setTimeout(() => drawer.close());
});
