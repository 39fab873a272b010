// The Payment Gateway 3 page's script (CONTRACT §11). It checks a card form
// before it is sent (the server checks again), sends the forms without
// leaving the page, and tells the page that embeds this one of every
// page_state with svc_payment_event messages, addressed to the embedding
// origin only (never "*"). Without it the forms still work.
(function () {
  "use strict";
  var root = document.getElementById("link");
  if (!root) {
    return;
  }
  var uuid = root.getAttribute("data-uuid");
  var success = root.getAttribute("data-success") || null;
  var failure = root.getAttribute("data-failure") || null;
  var allowed = (root.getAttribute("data-origins") || "").split(" ").filter(Boolean);
  var framed = window.parent !== window;

  // targets are the origins a message may go to: the embedding page's, when
  // the browser tells it and it is allowed, else each allowed origin (the
  // browser delivers a message only where its targetOrigin is the parent's
  // origin, so the others are dropped).
  function targets() {
    if (!framed) {
      return [];
    }
    var ancestors = window.location.ancestorOrigins;
    if (ancestors && ancestors.length > 0 && allowed.indexOf(ancestors[0]) >= 0) {
      return [ancestors[0]];
    }
    return allowed;
  }

  function redirectFor(state) {
    if (state === "paid") {
      return success;
    }
    if (state === "failed" || state === "expired") {
      return failure;
    }
    return null;
  }

  function announce(state, redirect) {
    var msg = {type: "svc_payment_event", page_state: state, uuid: uuid, redirect_url: redirect === undefined ? redirectFor(state) : redirect};
    targets().forEach(function (origin) {
      window.parent.postMessage(msg, origin);
    });
  }

  // leave sends the customer's top window to url.
  function leave(url) {
    if (!url) {
      return;
    }
    try {
      window.top.location.href = url;
    } catch (e) {
      window.location.href = url;
    }
  }

  function show(state, text, reason) {
    root.setAttribute("data-state", state);
    var status = document.getElementById("status");
    status.textContent = text;
    status.setAttribute("data-status", state);
    status.className = "status status-" + state;
    var why = document.getElementById("failure-reason");
    why.textContent = reason || "";
    why.hidden = !reason;
  }

  function showErrors(list) {
    var ul = document.getElementById("errors");
    while (ul.firstChild) {
      ul.removeChild(ul.firstChild);
    }
    list.forEach(function (text) {
      var li = document.createElement("li");
      li.textContent = text;
      ul.appendChild(li);
    });
    ul.hidden = list.length === 0;
  }

  // Card checks, as payd's server makes them: digits, brand, length, Luhn,
  // expiry month not past, CVC of the brand's length.
  var lengths = {visa: [13, 16, 19], mastercard: [16], amex: [15]};

  function brandOf(d) {
    if (d.charAt(0) === "4") {
      return "visa";
    }
    if (/^3[47]/.test(d)) {
      return "amex";
    }
    var p2 = parseInt(d.slice(0, 2), 10), p4 = parseInt(d.slice(0, 4), 10);
    if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) {
      return "mastercard";
    }
    return "";
  }

  function luhn(d) {
    var sum = 0, double = false;
    for (var i = d.length - 1; i >= 0; i--) {
      var v = d.charCodeAt(i) - 48;
      if (double) {
        v *= 2;
        if (v > 9) {
          v -= 9;
        }
      }
      sum += v;
      double = !double;
    }
    return sum % 10 === 0;
  }

  function numberProblem(d) {
    if (!/^[0-9]{12,19}$/.test(d)) {
      return "Enter the 12 to 19 digits of the card number.";
    }
    var brand = brandOf(d);
    if (!brand) {
      return "Only Visa, Mastercard and American Express cards are taken.";
    }
    if (lengths[brand].indexOf(d.length) < 0) {
      return "This card number has the wrong number of digits.";
    }
    if (!luhn(d)) {
      return "This is not a valid card number: check the digits.";
    }
    return "";
  }

  function expiryProblem(v) {
    var m = /^([0-9]{2})\/([0-9]{2})$/.exec(v.replace(/\s/g, ""));
    var now = new Date();
    if (m) {
      var month = parseInt(m[1], 10), year = 2000 + parseInt(m[2], 10);
      if (month >= 1 && month <= 12 && (year > now.getFullYear() || (year === now.getFullYear() && month >= now.getMonth() + 1))) {
        return "";
      }
    }
    return "Enter the card's expiry month, not in the past, as MM/YY.";
  }

  function checkCard(form) {
    var number = form.elements["cc-number"], expiry = form.elements["cc-exp"], csc = form.elements["cc-csc"];
    var digits = number.value.replace(/[\s-]/g, "");
    number.setCustomValidity(numberProblem(digits));
    expiry.setCustomValidity(expiryProblem(expiry.value));
    var n = brandOf(digits) === "amex" ? 4 : 3;
    csc.setCustomValidity(new RegExp("^[0-9]{" + n + "}$").test(csc.value) ? "" : "Enter the " + n + " digits of the card's security code.");
    return form.reportValidity();
  }

  var forms = Array.prototype.slice.call(document.querySelectorAll("form[data-pay]"));
  var busy = false;

  function setDisabled(on) {
    forms.forEach(function (f) {
      Array.prototype.forEach.call(f.querySelectorAll("button"), function (b) {
        b.disabled = on;
      });
    });
  }

  function settle(ans, form) {
    showErrors(ans.errors || []);
    show(ans.page_state, ans.status_text, ans.failure_reason);
    announce(ans.page_state, ans.redirect_url);
    var area = document.getElementById("pay-area");
    if (ans.page_state === "paid" || ans.page_state === "expired") {
      if (area) {
        area.hidden = true;
      }
    }
    if (ans.page_state === "failed" && form.id === "card-form") {
      form.elements["cc-number"].value = "";
      form.elements["cc-csc"].value = "";
    }
    if (ans.page_state !== "pending") {
      leave(ans.redirect_url);
    }
  }

  function send(form, submitter) {
    var before = root.getAttribute("data-state");
    var data = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      data.append(name, value);
    });
    if (submitter && submitter.name) {
      data.append(submitter.name, submitter.value);
    }
    busy = true;
    setDisabled(true);
    showErrors([]);
    show("processing", "Processing your payment", "");
    announce("processing");
    fetch(form.getAttribute("action"), {method: "POST", body: data, headers: {"Accept": "application/json"}, credentials: "same-origin"})
      .then(function (res) {
        return res.json();
      })
      .then(function (ans) {
        busy = false;
        setDisabled(false);
        settle(ans, form);
      })
      .catch(function () {
        busy = false;
        setDisabled(false);
        show(before, "Could not reach the payment service: try again", "");
        announce(before);
      });
  }

  forms.forEach(function (form) {
    form.addEventListener("input", function (ev) {
      if (ev.target.setCustomValidity) {
        ev.target.setCustomValidity("");
      }
    });
    form.addEventListener("submit", function (ev) {
      ev.preventDefault();
      if (busy || (form.id === "card-form" && !checkCard(form))) {
        return;
      }
      send(form, ev.submitter);
    });
  });

  announce(root.getAttribute("data-state"));
})();
